import type { AuditRecord, AuditStore } from '@baton/contracts';
import type { OwnershipConsensus } from './audit-projection.js';

/**
 * Where a committed transfer's record is: sealed in the replicated state until every voter
 * present at commit stored it, then in this member's durable audit. Read after a linearizable
 * read, so a move committed anywhere is found.
 */
export class SealedRecords {
  constructor(private readonly deps: { consensus: OwnershipConsensus; audit: AuditStore }) {}

  /** The sealed record of transfer `id`: pending in consensus (linearizable read) or stored. */
  async find(id: string): Promise<AuditRecord | undefined> {
    const { state } = await this.deps.consensus.read();
    return state.pending.get(id)?.record ?? (await this.deps.audit.byId(id));
  }

  /** The authority's latest sealed record: pending in consensus (linearizable read) or stored. */
  async latest(authority: string): Promise<AuditRecord | undefined> {
    const { state } = await this.deps.consensus.read();
    let latest: AuditRecord | undefined;
    for (const id of state.pendingByAuthority.get(authority) ?? []) {
      const record = state.pending.get(id)?.record;
      if (record && (!latest || record.commit_index > latest.commit_index)) latest = record;
    }
    return latest ?? (await this.deps.audit.latest(authority));
  }
}
