// The public entry point of @baton/cluster.
export { clusterStatusRouter, memberReportRouter } from './cluster-routes.js';
export { clusterStatus } from './cluster-status.js';
export { consensusAdminRouter } from './consensus-admin-router.js';
export { healthRouter } from './health-router.js';
export { LeaderLoss } from './leader-loss.js';
export { memberReport } from './member-report.js';
export { gatherMemberStatuses } from './member-reports.js';
export { ConsensusReadiness, servingReadiness } from './readiness.js';
export type { Readiness } from './readiness.js';
export { RecentTransfers } from './recent-transfers.js';
export type { ClusterStatus, MemberStatus } from './schemas.js';
export { BackupInvalidError, backupHeaderSchema, decodeBackup } from './snapshot-file.js';
export type { BackupHeader, BackupVariant } from './snapshot-file.js';
