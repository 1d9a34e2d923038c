import type { ApplyContext, StateAssembly, StateCapture, StateMachine } from '@baton/contracts';
import type {
  AckAuditResult,
  AckAuditCommand,
  CommitPlannedTransferCommand,
  CommitPlannedTransferResult,
  Ownership,
  OwnershipCommand,
  OwnershipResult,
  OwnershipState,
  SettleCatchUpCommand,
  SettleCatchUpResult,
  TransferAuthorityCommand,
  TransferAuthorityResult,
} from './ownership.js';
import { catchUpAfter, finalBarrier, finalsComplete, MAX_SETTLED_MEMBERS, placementOf } from './ownership.js';
import { setAuthorityPlacement } from './authority-placement.js';
import {
  dropIntent,
  dropPending,
  emptyOwnershipState,
  indexOwnership,
  putAbandoned,
  putOwnership,
  putPending,
  restoreOwnership,
  snapshotOwnership,
  supersedeAbandoned,
} from './ownership-index.js';
import { applyTransferLifecycle } from './transfer-lifecycle.js';
import { epochRefusal } from './epoch-precondition.js';
import { assembleOwnership, captureOwnership } from './ownership-capture.js';
import { updateValue } from '@baton/consensus';
import { rawMoveRecord, sealAuthorityMove } from './authority-trail.js';
import { pendingPlanned } from './planned-record.js';

/**
 * The replicated ownership state machine: authority -> home datacenter + fencing epoch, the
 * registered planned transfers (one per authority, with their barrier and freeze), and the
 * sealed audit records each voter present at commit still has to store. Pure, as the contract
 * demands: every member reaches the same state from the same log. Refusals are results. Every
 * command costs O(log n) in the number of authorities (tree lookups and index updates, no scans).
 */
export class OwnershipStateMachine implements StateMachine<OwnershipState, OwnershipCommand, OwnershipResult> {
  initial(): OwnershipState {
    return emptyOwnershipState();
  }

  apply(state: OwnershipState, command: OwnershipCommand, ctx: ApplyContext): OwnershipResult {
    switch (command.type) {
      case 'transfer_authority':
        return this.transferAuthority(state, command, ctx);
      case 'track_abandoned_keys':
        state.abandonedTracked = true;
        return { ok: true, tracked: true };
      case 'set_authority_placement':
        return setAuthorityPlacement(state, command);
      case 'commit_planned_transfer':
        return this.commitPlannedTransfer(state, command, ctx);
      case 'ack_audit':
        return this.ackAudit(state, command);
      case 'settle_catch_up':
        return this.settleCatchUp(state, command);
      case 'register_transfer':
      case 'freeze_transfer':
      case 'record_final':
      case 'thaw_transfer':
      case 'release_transfer':
        return applyTransferLifecycle(state, command, ctx);
      default:
        // An unknown command from a newer member must not crash this one nor change state.
        return { ok: false, reason: 'unknown_command' };
    }
  }

  /** Voters that left can no longer store anything: their obligations are released. */
  membershipChanged(state: OwnershipState, ctx: ApplyContext): void {
    const voters = new Set(ctx.voters);
    for (const [id, pending] of [...state.pending]) {
      const awaiting = pending.awaiting.filter((member) => voters.has(member));
      if (awaiting.length === 0) dropPending(state, id);
      else if (awaiting.length !== pending.awaiting.length) putPending(state, { record: pending.record, awaiting });
    }
  }

  snapshot(state: OwnershipState): unknown {
    return snapshotOwnership(state);
  }

  restore(snapshot: unknown): OwnershipState {
    return restoreOwnership(snapshot);
  }

  /** A copy-on-write freeze now (O(1)); the records are read out in pieces later (ownership-capture.ts). */
  capture(state: OwnershipState): StateCapture {
    return captureOwnership(state);
  }

  assemble(): StateAssembly<OwnershipState> {
    return assembleOwnership();
  }

  private transferAuthority(state: OwnershipState, c: TransferAuthorityCommand, ctx: ApplyContext): TransferAuthorityResult {
    // A known authority is checked and moved in one descent of the tree (the common command at
    // scale); only an authority the state has never seen takes a second one, to be inserted.
    let refusal: TransferAuthorityResult | undefined;
    let source: string | undefined;
    let previous: Ownership | undefined;
    const moved = updateValue(state.authorities, c.authority, (current) => {
      refusal = refusalOf(c, current);
      if (refusal) return undefined;
      source = current.home;
      previous = current;
      return { home: c.target, epoch: current.epoch + 1, ...placementOf(current) };
    });
    if (refusal) return refusal;
    let epoch: number;
    if (moved) {
      epoch = moved.epoch;
      // Sealed before the release below: the record is the move, the release its consequence.
      // A failover leaves no requirement: the move it replaces is no longer waited on.
      indexOwnership(state, c.authority, previous, moved);
    } else {
      const unknown = refusalOf(c, undefined);
      if (unknown) return unknown;
      epoch = 1;
      state.authorities.set(c.authority, { home: c.target, epoch });
    }
    const record = sealAuthorityMove(state, ctx, rawMoveRecord(c, ctx, source, previous?.epoch ?? 0, epoch));
    // A failover moves the home under a registered planned transfer: that transfer can no
    // longer commit (its source is not the home), and its freeze must not outlive the move. Its
    // key stays refused for another move; being older than this move, it is superseded already.
    supersedeAbandoned(state, c.authority);
    const dropped = dropIntent(state, c.authority);
    if (dropped) {
      const { id, authority, source: from, target, reason } = dropped;
      putAbandoned(state, { id, authority, source: from, target, reason, why: 'failover', released: ctx.position.index, superseded: true });
    }
    return { ok: true, authority: c.authority, source, home: c.target, epoch, record: { ...record } };
  }

  private commitPlannedTransfer(
    state: OwnershipState,
    c: CommitPlannedTransferCommand,
    ctx: ApplyContext,
  ): CommitPlannedTransferResult {
    // The same transfer applied twice (a retry that slipped past the idempotency window while
    // its record is still pending) answers with the record it sealed, never a second move.
    // A raw move's record id (`<commit_index>-0`) is no transfer key, even when a key is spelt so.
    const sealed = pendingPlanned(state, c.id);
    if (sealed && sealed.authority === c.authority) return { ok: true, record: sealed };
    const current = state.authorities.get(c.authority);
    if (!current) return { ok: false, reason: 'unknown_authority' };
    const intent = state.transfers.get(c.authority);
    // Only the registered transfer commits, and only once every source member froze the
    // authority and named its final serial: what the target applied was checked against those.
    if (!intent || intent.id !== c.id || intent.source !== c.source || intent.target !== c.target) {
      return { ok: false, reason: 'not_registered', home: current.home, epoch: current.epoch };
    }
    if (current.home !== intent.source) {
      return { ok: false, reason: 'source_not_home', home: current.home, epoch: current.epoch };
    }
    if (!finalsComplete(intent)) return { ok: false, reason: 'not_frozen', home: current.home, epoch: current.epoch };
    const epoch = current.epoch + 1;
    // The target was seen at the finals before this apply, not at it: the new home checks its
    // own replica against them before it acknowledges a write under this epoch.
    const catchUp = catchUpAfter(intent);
    putOwnership(state, c.authority, { home: intent.target, epoch, ...(catchUp ? { catchUp } : {}), ...placementOf(current) });
    dropIntent(state, c.authority);
    supersedeAbandoned(state, c.authority);
    const at = c.observed?.at;
    const record = sealAuthorityMove(state, ctx, {
      id: intent.id,
      kind: 'planned_transfer',
      authority: intent.authority,
      source: intent.source,
      target: intent.target,
      actor: intent.actor,
      reason: intent.reason,
      barrier: finalBarrier(intent),
      epoch,
      epoch_before: current.epoch,
      ...(Number.isSafeInteger(at) && at! >= 0 ? { time: at } : {}),
    });
    return { ok: true, record: { ...record } };
  }

  /** Records that `member` of the home held every final of the move that minted `epoch`. */
  private settleCatchUp(state: OwnershipState, c: SettleCatchUpCommand): SettleCatchUpResult {
    const current = state.authorities.get(c.authority);
    if (!current) return { ok: false, reason: 'unknown_authority' };
    if (current.epoch !== c.epoch) return { ok: false, reason: 'stale_epoch' };
    const catchUp = current.catchUp;
    if (!catchUp) return { ok: true, settled: [], done: true };
    const adds = typeof c.member === 'string' && !catchUp.settled.includes(c.member) && catchUp.settled.length < MAX_SETTLED_MEMBERS;
    const settled = adds ? [...catchUp.settled, c.member] : catchUp.settled;
    const done = catchUp.done === true || everySettled(settled, c.homeMembers);
    if (!adds && done === (catchUp.done === true)) return { ok: true, settled: [...settled], done };
    // Replaced, not changed in place: a capture in progress may share the record.
    putOwnership(state, c.authority, {
      home: current.home,
      epoch: current.epoch,
      catchUp: done ? { finals: catchUp.finals, settled, done: true } : { finals: catchUp.finals, settled },
      ...placementOf(current),
    });
    return { ok: true, settled: [...settled], done };
  }

  private ackAudit(state: OwnershipState, c: AckAuditCommand): AckAuditResult {
    const released: string[] = [];
    const unknown: string[] = [];
    for (const id of Array.isArray(c.ids) ? c.ids : []) {
      const pending = typeof id === 'string' ? state.pending.get(id) : undefined;
      if (!pending) {
        unknown.push(id);
        continue;
      }
      const awaiting = pending.awaiting.filter((member) => member !== c.member);
      if (awaiting.length === 0) {
        dropPending(state, id);
        released.push(id);
      } else if (awaiting.length !== pending.awaiting.length) {
        // Replaced, not changed in place: a capture in progress may share the record.
        putPending(state, { record: pending.record, awaiting });
      }
    }
    return { ok: true, released, unknown };
  }
}

/** Every member the settling member's roster lists for the home has settled (a list in bounds only). */
function everySettled(settled: readonly string[], homeMembers: unknown): boolean {
  if (!Array.isArray(homeMembers) || homeMembers.length === 0 || homeMembers.length > MAX_SETTLED_MEMBERS) return false;
  return homeMembers.every((member) => settled.includes(member as string));
}

/** Why `c` must not move the authority from `current` (undefined: never seen), if it must not. */
function refusalOf(c: TransferAuthorityCommand, current: Ownership | undefined): TransferAuthorityResult | undefined {
  const stale = epochRefusal(current, c.expectedEpoch);
  if (stale) return stale;
  if (c.expectedSource !== undefined && current?.home !== c.expectedSource) {
    return current ? { ok: false, reason: 'source_not_home', home: current.home, epoch: current.epoch } : { ok: false, reason: 'unknown_authority' };
  }
  if (current?.home === c.target) return { ok: false, reason: 'already_home', home: current.home, epoch: current.epoch };
  return undefined;
}
