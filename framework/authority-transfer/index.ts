// The public entry point of @baton/authority-transfer.
export { AUTHORITY_AUDIT_KINDS, MAX_AUDIT_PAGE, type AuthorityAuditKind } from './audit-page.js';
export type { AuthorityNode } from './authority-node.js';
export type { TransferStatus } from './transfer-status.js';
export { AUTHORITY_NODE, PUBLIC_PEER_ROUTES, authorityNodeDcPlugin, authorityNodeHaPlugin, ownershipStateMachinePlugin } from './plugins.js';
export { rosterMemberIds } from './roster-member-ids.js';
export type { PlanState, TransferRequest } from './transfer-plan.js';
