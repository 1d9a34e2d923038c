// The pure Raft core. Its machinery (RaftCore, the log, progress, read index, the log storage
// seam) is @internal: RaftConsensus drives it, and so do the simulation and the core's transcript
// tests; a deployment picks raftConsensusPlugin. Its data types (Entry, Message, HardState,
// Snapshot) stay public, as the RaftStorage a deployment may supply is written in them.
export * from './types.js';
export * from './storage.js';
export * from './raft-log.js';
export * from './progress.js';
export * from './read-index.js';
export * from './raft.js';
export * from './must-sync.js';
