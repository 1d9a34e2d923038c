import type { ApplyContext, AuditRecord } from '@baton/contracts';
import { chainRecord } from '@baton/consensus';
import type { StreamMetadata } from './stream-metadata.js';
import type { StreamAuditKind } from './audit-kinds.js';

/**
 * The stream cluster's audit trail: every ownership change the state machine decides is sealed
 * here, in apply, as a record of the one trail the cluster keeps (hash-chained, its head in the
 * replicated state), and left pending until every voter present at the commit stored it in its
 * audit store (the projection, shared with the authority variant, does that).
 */

/** The trail's name: the `authority` field of every record the stream variant seals. */
export const STREAM_AUDIT_TRAIL = 'streams';

export { STREAM_AUDIT_KINDS, type StreamAuditKind } from './audit-kinds.js';

export type StreamAuditSubject = 'stream' | 'node' | 'cluster';

/** The subject of a rebalance plan: the whole cluster. */
export const CLUSTER_SUBJECT = 'cluster';

/** Who decided a change when no principal proposed it: the component that did. */
export const SYSTEM_ACTORS = {
  handoff: 'system:handoff',
  drain: 'system:drain',
  rebalance: 'system:rebalance',
  liveness: 'system:liveness',
  takeover: 'system:takeover',
  maintenance: 'system:maintenance',
} as const;

/** One change, as the rule that decided it describes it. */
export interface StreamChange {
  kind: StreamAuditKind;
  subject_type: StreamAuditSubject;
  subject: string;
  from?: string;
  to?: string;
  epoch_before?: number;
  epoch_after?: number;
  actor: string;
  reason: string;
  cause?: string;
  evidence?: string;
}

/** What a proposer stamps on a command for its record: who asked, when (its clock), what it saw. */
export interface ProposalStamp {
  actor?: string;
  at?: number;
  evidence?: string;
}

/**
 * Seals the records of one apply: ids are `<commit_index>-<seq>`, so they are the same on every
 * replica and a retried projection writes the same record again. O(1) per record (a hash and a
 * tree insert), never a scan.
 */
export class AuditSeal {
  private seq = 0;

  constructor(
    private readonly state: StreamMetadata,
    private readonly ctx: ApplyContext,
    private readonly stamp: ProposalStamp,
  ) {}

  /** The id the next record of this apply will get (a cause its followers can name). */
  get nextId(): string {
    return `${this.ctx.position.index}-${this.seq}`;
  }

  /** How many records this apply sealed so far. */
  get sealed(): number {
    return this.seq;
  }

  seal(change: StreamChange): string {
    const id = this.nextId;
    const base: Omit<AuditRecord, 'prev_hash' | 'hash'> = {
      id,
      authority: STREAM_AUDIT_TRAIL,
      source: change.from ?? '',
      target: change.to ?? '',
      actor: change.actor,
      reason: change.reason,
      barrier: 0,
      epoch: change.epoch_after ?? 0,
      commit_term: this.ctx.position.term,
      commit_index: this.ctx.position.index,
      seq: this.seq,
      kind: change.kind,
      subject_type: change.subject_type,
      subject: change.subject,
      ...(change.epoch_before !== undefined ? { epoch_before: change.epoch_before } : {}),
      ...(change.cause !== undefined ? { cause: change.cause } : {}),
      ...(change.evidence !== undefined ? { evidence: change.evidence } : {}),
      ...(this.stamp.at !== undefined ? { time: this.stamp.at } : {}),
    };
    this.seq += 1;
    const { record, chain } = chainRecord(this.state.auditChain, base);
    this.state.auditChain = chain;
    if (this.ctx.voters.length > 0) this.state.putAuditPending({ record, awaiting: [...this.ctx.voters] });
    return id;
  }
}

/** The ids of the records an entry sealed, from its position and the count its result carries. */
export function sealedIds(index: number, count: number | undefined): string[] {
  const ids: string[] = [];
  for (let seq = 0; seq < (count ?? 0); seq++) ids.push(`${index}-${seq}`);
  return ids;
}
