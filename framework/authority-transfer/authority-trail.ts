import { copyAuditRecord, type ApplyContext, type AuditRecord } from '@baton/contracts';
import { chainRecord, emptyChain } from '@baton/consensus';
import type { OwnershipState, TransferAuthorityCommand } from './ownership.js';
import { putPending } from './ownership-index.js';
import { UNATTRIBUTED_RAW_ACTOR, type AuthorityAuditKind } from './authority-audit-kinds.js';
import { lossEvidence } from './failover-loss.js';

/**
 * An authority's audit trail: every move of its home is sealed here, in apply, as the next record
 * of the authority's own trail (hash-chained, its head and anchors in the replicated state), and
 * left pending until every voter present at the commit stored it (AuditProjection). The chain
 * pieces are the stream variant's (@baton/consensus), so one verify reads both variants' trails.
 */

/** One move as the rule that decided it describes it. */
export type AuthorityMove = Omit<AuditRecord, 'prev_hash' | 'hash' | 'kind' | 'subject_type' | 'subject' | 'commit_term' | 'commit_index'> & {
  kind: AuthorityAuditKind;
};

/** Seals `move` as the authority's next record: O(log n) (a hash, two tree writes), never a scan. */
export function sealAuthorityMove(state: OwnershipState, ctx: ApplyContext, move: AuthorityMove): AuditRecord {
  const { record: linked, chain } = chainRecord(state.chains.get(move.authority) ?? emptyChain(), {
    ...move,
    subject_type: 'authority',
    subject: move.authority,
    commit_term: ctx.position.term,
    commit_index: ctx.position.index,
  });
  state.chains.set(move.authority, chain);
  // In the contract's field order: the record a store hands back is then the same text.
  const record = copyAuditRecord(linked);
  if (ctx.voters.length > 0) putPending(state, { record, awaiting: [...ctx.voters] });
  return record;
}

/**
 * The record of a raw transfer_authority move from `from` (undefined: the authority had no home)
 * at `epochBefore` to the command's target: `<commit_index>-0`, the same on every replica, so a
 * retried projection writes the same record again.
 */
export function rawMoveRecord(c: TransferAuthorityCommand, ctx: ApplyContext, from: string | undefined, epochBefore: number, epoch: number): AuthorityMove {
  const kind: AuthorityAuditKind = from === undefined ? 'authority_established' : c.failover === true ? 'failover_transfer' : 'raw_transfer';
  const evidence = kind === 'failover_transfer' ? lossEvidence(c.observed?.loss) : undefined;
  const at = c.observed?.at;
  return {
    id: `${ctx.position.index}-0`,
    kind,
    authority: c.authority,
    source: from ?? '',
    target: c.target,
    actor: typeof c.actor === 'string' && c.actor !== '' ? c.actor : UNATTRIBUTED_RAW_ACTOR,
    reason: typeof c.reason === 'string' ? c.reason : '',
    barrier: 0,
    epoch,
    epoch_before: epochBefore,
    ...(Number.isSafeInteger(at) && at! >= 0 ? { time: at } : {}),
    ...(evidence !== undefined ? { evidence } : {}),
  };
}
