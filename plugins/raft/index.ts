// The in-memory Raft: a pure core, the MetadataConsensus driver, storage and transports.
export * from './core/index.js';
export * from './storage/index.js';
export { RaftConsensus, type RaftConsensusStats } from './driver/raft-consensus.js';
export { DEFAULT_TUNING, type RaftConsensusOptions, type RaftTuning } from './driver/options.js';
export { RAFT_CHANNEL, PROPOSE_CHANNEL } from './driver/wire.js';
export * from './transport-http.js';
export * from './plugin.js';
