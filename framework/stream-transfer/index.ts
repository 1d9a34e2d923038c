// The public entry point of @baton/stream-transfer.
export { StreamApiError, StreamClient } from './client.js';
export type { AppendAnswer, FailoverAnswer, KeyedWrite, NodeGuard, ReadAnswer, RebalanceAnswer, StreamClientOptions, StreamPage, TransferGuard } from './client.js';
export { MAX_READ_LIMIT, MAX_RECORDS_PER_APPEND } from './data-router.js';
export { MAX_PAGE_LIMIT } from './listing.js';
export type { StreamSummary } from './listing.js';
export { MAX_NODE_SLOTS } from './model.js';
export type { NodeId, NodeLiveness, PendingTransfer, PlannedMove, PlannedMoveFrom, ProducerMark, StreamId, TransferReason } from './model.js';
export { STREAM_NODE, STREAM_PEER_ROUTES, streamNodePlugin, streamStateMachinePlugin } from './plugins.js';
export type { DrainProgress, NodeStatus } from './progress.js';
export type { PlanNodeEffect, PlanPreview, QueuedMove, RebalancePage } from './rebalance-listing.js';
export type { StreamNodeService } from './stream-node-service.js';
export { repairWal } from './wal-repair.js';
export type { WalRepairReport } from './wal-repair.js';
export type { BatchStamp, ProducerStamp, WalEntry } from './wal.js';
