// The simulation harness: one seed drives randomness, time, the network and the disks.
export * from '@baton/conformance';
export * from '@baton/conformance';
export * from './network.js';
export * from './disk.js';
