// The simulation harness: one seed drives randomness, time, the network and the disks.
export * from '../../conformance/seeded-rng.js';
export * from '../../conformance/virtual-clock.js';
export * from './network.js';
export * from './disk.js';
