// Consensus members over the simulation harness: one seed, any state machine, crash and restart.
export * from './raft-sim-cluster.js';
