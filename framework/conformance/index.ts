// What every plugin author runs against a plugin: one suite per contract, the linearizability
// checker the consensus suite judges histories with, a deterministic clock and rng, and launchers
// of real redis-server and etcd processes on free loopback ports for a plugin's own tests.
export * from './consensus-suite.js';
export * from './object-store-suite.js';
export * from './audit-store-suite.js';
export * from './identity-supplier-suite.js';
export * from './linearizability/index.js';
export * from './kv-state-machine.js';
export { SeededRng } from './seeded-rng.js';
export { VirtualClock, flushMicrotasks } from './virtual-clock.js';
export * from './servers/server-process.js';
export * from './servers/redis-server.js';
export * from './servers/etcd-server.js';
