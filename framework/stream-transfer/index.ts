// The public entry point of @baton/stream-transfer.
export { AUDIT_SCAN_BUDGET, MAX_AUDIT_PAGE } from './audit-listing.js';
export type { AuditRecordView } from './audit-listing.js';
export { STREAM_AUDIT_KINDS, STREAM_AUDIT_TRAIL } from './audit-trail.js';
export { MAX_READ_LIMIT, MAX_RECORDS_PER_APPEND } from './data-router.js';
export { MAX_PAGE_LIMIT } from './listing.js';
export type { StreamSummary } from './listing.js';
export { MAX_NODE_SLOTS } from './model.js';
export type { Labels, StreamPlacement } from './labels.js';
export type { NodeId, NodeLiveness, PendingTransfer, PlannedMove, PlannedMoveFrom, ProducerMark, StreamId, TransferReason } from './model.js';
export { STREAM_NODE, STREAM_PEER_ROUTES, streamNodePlugin, streamStateMachinePlugin } from './plugins.js';
export type { DrainProgress, NodeStatus } from './progress.js';
export type { PlanNodeEffect, PlanPreview, QueuedMove, RebalancePage } from './rebalance-listing.js';
export type { PlanProgress, PlanSummary, PlanView } from './plan-view.js';
export type { LabelEffect, NodeEffect, PlanEffect, PlanGoal, PlanStatus, ViolationCount } from './plan-record.js';
export type { StreamNodeService } from './stream-node-service.js';
export { repairWal } from './wal-repair.js';
export type { WalRepairReport } from './wal-repair.js';
export type { BatchStamp, ProducerStamp, WalEntry } from './wal.js';
// The trail's chain check, for a client that verifies what a node's audit store holds.
export { verifyTrail as verifyAuditTrail } from '@baton/consensus';
export type { TrailChain, TrailVerdict } from '@baton/consensus';
