// The public entry point of @baton/consensus.
export { canonicalJson, commandFingerprint, OBSERVED_MEMBER } from './canonical-json.js';
export { IdempotencyWindow } from './idempotency-window.js';
export type { IdempotencyWindowSnapshot, RememberedDecision } from './idempotency-window.js';
export { readPieces, recordPieces } from './record-pieces.js';
export type { HeadPiece, PieceReader, RecordsPiece } from './record-pieces.js';
export { SharedCatchUp } from './shared-catch-up.js';
export { keysAfter, sortedTree, updateValue, valuesAfter } from './sorted-tree.js';
export type { SortedTree } from './sorted-tree.js';
export { assembleState, captureState } from './state-capture.js';
export { ANCHOR_EVERY, MAX_ANCHORS, auditRecordHash, chainRecord, emptyChain, verifyTrail } from './audit-chain.js';
export type { ChainBreak, TrailChain, TrailHead, TrailVerdict } from './audit-chain.js';
export { AuditTrailProjection } from './audit-projection.js';
export type { AuditProjectionOptions, AuditTrailSource } from './audit-projection.js';
export { acknowledgeAudits, releaseLeftVoters } from './pending-audits.js';
export type { AckAuditResult as AuditAckResult, PendingAudit, PendingAuditTable } from './pending-audits.js';
