import type { AuditStore, Clock, Logger, MetadataConsensus } from '@baton/contracts';
import { AuditTrailProjection, type AuditProjectionOptions, type AuditTrailSource } from '@baton/consensus';
import type { OwnershipCommand, OwnershipResult, OwnershipState } from './ownership.js';

export type { AuditProjectionOptions } from '@baton/consensus';

export type OwnershipConsensus = MetadataConsensus<OwnershipState, OwnershipCommand, OwnershipResult>;

/**
 * Where the ownership state machine keeps the records it sealed: a planned transfer's commit
 * seals its record, every raw move (establish, failover transfer) seals one too; the result of
 * each names the record (`record.id`).
 */
export const ownershipTrailSource: AuditTrailSource<OwnershipState, OwnershipCommand, OwnershipResult> = {
  pending: (state) => state.pending.values(),
  pendingById: (state, id) => state.pending.get(id),
  sealedBy: (_view, { result }) => (result.ok && 'record' in result && result.record ? [result.record.id] : []),
  acknowledge: (ids, member) => ({ type: 'ack_audit', ids, member }),
};

/** The authority variant's projection of its sealed records into this member's audit store. */
export class AuditProjection extends AuditTrailProjection<OwnershipState, OwnershipCommand, OwnershipResult> {
  constructor(consensus: OwnershipConsensus, store: AuditStore, clock: Clock, log: Logger, options: AuditProjectionOptions = {}) {
    super(consensus, ownershipTrailSource, store, clock, log, options);
  }
}
