import type { AuditRecord, AuditStore } from '@baton/contracts';
import type { OwnershipConsensus } from './audit-projection.js';
import { isPlannedRecord, pendingPlanned, plannedOnly } from './planned-record.js';

/**
 * An authority's trail is read this far back for its latest planned transfer: raw moves since
 * (failovers) are few, and a cancel answered from further back would name a move long gone.
 */
const LATEST_PLANNED_SCAN = 1_000;
const PAGE = 100;

/**
 * Where a committed transfer's record is: sealed in the replicated state until every voter
 * present at commit stored it, then in this member's durable audit. Read after a linearizable
 * read, so a move committed anywhere is found. Only planned transfers' records: a raw move's
 * record is no transfer (planned-record.ts).
 */
export class SealedRecords {
  constructor(private readonly deps: { consensus: OwnershipConsensus; audit: AuditStore }) {}

  /** The sealed record of transfer `id`: pending in consensus (linearizable read) or stored. */
  async find(id: string): Promise<AuditRecord | undefined> {
    const { state } = await this.deps.consensus.read();
    return pendingPlanned(state, id) ?? plannedOnly(await this.deps.audit.byId(id));
  }

  /** The authority's latest planned transfer's record: pending in consensus (linearizable read) or stored. */
  async latest(authority: string): Promise<AuditRecord | undefined> {
    const { state } = await this.deps.consensus.read();
    let latest: AuditRecord | undefined;
    for (const id of state.pendingByAuthority.get(authority) ?? []) {
      const record = state.pending.get(id)?.record;
      if (isPlannedRecord(record) && (!latest || record.commit_index > latest.commit_index)) latest = record;
    }
    return latest ?? (await this.latestStored(authority));
  }

  /** The newest planned record this member's store holds, within LATEST_PLANNED_SCAN records. */
  private async latestStored(authority: string): Promise<AuditRecord | undefined> {
    const newest = await this.deps.audit.latest(authority);
    if (newest === undefined || isPlannedRecord(newest)) return newest;
    let cursor: { before: number; beforeSeq: number } | undefined;
    for (let scanned = 0; scanned < LATEST_PLANNED_SCAN; scanned += PAGE) {
      const page = await this.deps.audit.list(authority, { limit: PAGE, ...cursor });
      const planned = page.find((r) => isPlannedRecord(r));
      if (planned) return planned;
      if (page.length < PAGE) return undefined;
      const last = page[page.length - 1]!;
      cursor = { before: last.commit_index, beforeSeq: last.seq ?? 0 };
    }
    return undefined;
  }
}
