// The simulation harness: one seed drives randomness, time, the network and the disks.
export * from './seeded-rng.js';
export * from './virtual-clock.js';
export * from './network.js';
export * from './disk.js';
