// The in-memory Raft: a pure core, the MetadataConsensus driver, storage and transports.
export * from './core/index.js';
export * from './storage/index.js';
export { RaftConsensus, type RaftConsensusStats } from './driver/raft-consensus.js';
export { DEFAULT_TUNING, type RaftConsensusOptions, type RaftTuning } from './driver/options.js';
export { RAFT_CHANNEL, PROPOSE_CHANNEL } from './driver/wire.js';
export * from './transport-http.js';
export * from './plugin.js';
export { RAFT_SNAPSHOT_FORMAT } from './driver/raft-admin.js';
export { FileRaftStorage } from './storage/file-storage.js';
export { repairRaftLog } from './storage/log-repair.js';
export type { RaftRepairReport } from './storage/log-repair.js';
export type { LogProblem } from './storage/log-reader.js';
export { MemoryRaftStorage } from './storage/memory-storage.js';
export { imageOfPieces } from './storage/snapshot-image.js';
export type { SnapshotImage } from './storage/snapshot-image.js';
export { raftPeerRoutesPlugin } from './peer-routes-plugin.js';
export { singleMemberConsensusPlugin } from './single-member-consensus.js';
