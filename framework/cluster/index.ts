// The public entry point of @baton/cluster.
export { clusterStatusRouter, memberReportRouter } from './cluster-routes.js';
export type { ClusterRoutesOptions } from './cluster-routes.js';
export { clusterStatus } from './cluster-status.js';
export type { ClusterFacts } from './cluster-status.js';
export { consensusAdminRouter } from './consensus-admin-router.js';
export type { ConsensusAdminOptions } from './consensus-admin-router.js';
export { healthRouter } from './health-router.js';
export { LeaderLoss } from './leader-loss.js';
export { memberReport } from './member-report.js';
export { gatherMemberStatuses } from './member-reports.js';
export type { GatherOptions, PeerMember } from './member-reports.js';
export { ConsensusReadiness, servingReadiness } from './readiness.js';
export type { ConsensusReadinessOptions, NotReadyReason, Readiness, ReadinessVerdict } from './readiness.js';
export { RecentTransfers } from './recent-transfers.js';
// The cluster picture as members report it and /cluster/status answers it (what baton status reads).
export * from './schemas.js';
export { BackupInvalidError, backupHeaderSchema, decodeBackup } from './snapshot-file.js';
export type { BackupHeader, BackupVariant } from './snapshot-file.js';
