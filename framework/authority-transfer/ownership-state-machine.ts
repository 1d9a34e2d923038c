import type { ApplyContext, StateMachine } from '../contracts/metadata-consensus.js';
import type {
  AckAuditResult,
  AckAuditCommand,
  CommitPlannedTransferCommand,
  CommitPlannedTransferResult,
  OwnershipCommand,
  OwnershipResult,
  OwnershipState,
  TransferAuthorityCommand,
  TransferAuthorityResult,
} from './ownership.js';

/**
 * The replicated ownership state machine: authority -> home datacenter + fencing epoch, and the
 * sealed audit records each voter present at commit still has to store. Pure, as the contract
 * demands: every member reaches the same state from the same log. Refusals are results.
 */
export class OwnershipStateMachine implements StateMachine<OwnershipState, OwnershipCommand, OwnershipResult> {
  initial(): OwnershipState {
    return { authorities: {}, pending: {} };
  }

  apply(state: OwnershipState, command: OwnershipCommand, ctx: ApplyContext): OwnershipResult {
    switch (command.type) {
      case 'transfer_authority':
        return this.transferAuthority(state, command);
      case 'commit_planned_transfer':
        return this.commitPlannedTransfer(state, command, ctx);
      case 'ack_audit':
        return this.ackAudit(state, command);
      default:
        // An unknown command from a newer member must not crash this one nor change state.
        return { ok: false, reason: 'unknown_command' };
    }
  }

  /** Voters that left can no longer store anything: their obligations are released. */
  membershipChanged(state: OwnershipState, ctx: ApplyContext): void {
    const voters = new Set(ctx.voters);
    for (const [id, pending] of Object.entries(state.pending)) {
      pending.awaiting = pending.awaiting.filter((member) => voters.has(member));
      if (pending.awaiting.length === 0) delete state.pending[id];
    }
  }

  snapshot(state: OwnershipState): unknown {
    return structuredClone(state);
  }

  restore(snapshot: unknown): OwnershipState {
    const s = snapshot as Partial<OwnershipState> | null;
    if (!s || typeof s !== 'object' || typeof s.authorities !== 'object' || typeof s.pending !== 'object') {
      throw new TypeError('ownership snapshot is malformed: expected {authorities, pending}');
    }
    return structuredClone({ authorities: s.authorities, pending: s.pending }) as OwnershipState;
  }

  private transferAuthority(state: OwnershipState, c: TransferAuthorityCommand): TransferAuthorityResult {
    const current = state.authorities[c.authority];
    if (c.expectedSource !== undefined && current?.home !== c.expectedSource) {
      return current
        ? { ok: false, reason: 'source_not_home', home: current.home, epoch: current.epoch }
        : { ok: false, reason: 'unknown_authority' };
    }
    if (current?.home === c.target) {
      return { ok: false, reason: 'already_home', home: current.home, epoch: current.epoch };
    }
    const epoch = (current?.epoch ?? 0) + 1;
    state.authorities[c.authority] = { home: c.target, epoch };
    return { ok: true, authority: c.authority, source: current?.home, home: c.target, epoch };
  }

  private commitPlannedTransfer(
    state: OwnershipState,
    c: CommitPlannedTransferCommand,
    ctx: ApplyContext,
  ): CommitPlannedTransferResult {
    // The same transfer applied twice (a retry that slipped past the idempotency window while
    // its record is still pending) answers with the record it sealed, never a second move.
    const sealed = state.pending[c.id];
    if (sealed && sealed.record.authority === c.authority) return { ok: true, record: sealed.record };
    const current = state.authorities[c.authority];
    if (!current) return { ok: false, reason: 'unknown_authority' };
    if (current.home !== c.source) {
      return { ok: false, reason: 'source_not_home', home: current.home, epoch: current.epoch };
    }
    if (c.source === c.target) return { ok: false, reason: 'already_home', home: current.home, epoch: current.epoch };
    const epoch = current.epoch + 1;
    state.authorities[c.authority] = { home: c.target, epoch };
    const record = {
      id: c.id,
      authority: c.authority,
      source: c.source,
      target: c.target,
      actor: c.actor,
      reason: c.reason,
      barrier: c.barrier,
      epoch,
      commit_term: ctx.position.term,
      commit_index: ctx.position.index,
    };
    if (ctx.voters.length > 0) state.pending[c.id] = { record, awaiting: [...ctx.voters] };
    return { ok: true, record: { ...record } };
  }

  private ackAudit(state: OwnershipState, c: AckAuditCommand): AckAuditResult {
    const released: string[] = [];
    const unknown: string[] = [];
    for (const id of Array.isArray(c.ids) ? c.ids : []) {
      const pending = state.pending[id];
      if (!pending) {
        unknown.push(id);
        continue;
      }
      pending.awaiting = pending.awaiting.filter((member) => member !== c.member);
      if (pending.awaiting.length === 0) {
        delete state.pending[id];
        released.push(id);
      }
    }
    return { ok: true, released, unknown };
  }
}
