// What a stream audit record says changed: its own module, free of imports, so the dashboard's
// browser bundle can list the kinds without pulling in the state machine.

/** What a record says changed. */
export const STREAM_AUDIT_KINDS = [
  'stream_created',
  'transfer_proposed',
  'transfer_completed',
  'transfer_cancelled',
  'node_drain',
  'node_undrain',
  'rebalance_planned',
  'plan_executed',
  'plan_cancelled',
  'node_failover',
  'stream_failed_over',
  'zombie_fenced',
  'node_liveness',
] as const;
export type StreamAuditKind = (typeof STREAM_AUDIT_KINDS)[number];
