import type { AuditRecord } from '../../../framework/contracts/audit-store.js';
import type { AppliedEntry, AppliedView } from '../../../framework/contracts/metadata-consensus.js';
import type { FeedOrigin } from '../../../framework/authority-transfer/change-feed.js';
import type {
  OwnershipCommand,
  OwnershipResult,
  OwnershipState,
} from '../../../framework/authority-transfer/ownership.js';
import type { Roster } from '../../../framework/authority-transfer/roster.js';
import {
  CatchUpTimeoutError,
  TransferCancelledError,
  TransferOutcomeUnknownError,
} from '../../../framework/authority-transfer/transfer-errors.js';
import type { SimMember } from './sim-cluster.js';

/**
 * What the invariants observe, whichever carries the ownership log (one shared fake log, or
 * Raft members): the roster, the members (their replicas and audit stores), every log entry
 * once, in log order, and the sealed records still pending projection.
 */
export interface ObservedCluster {
  readonly roster: Roster;
  readonly members: Map<string, SimMember>;
  watchLog(
    fn: (
      view: AppliedView<OwnershipState>,
      entry: AppliedEntry<OwnershipCommand, OwnershipResult>,
    ) => void,
  ): void;
  pendingAudits(): string[];
}

export class InvariantViolation extends Error {}

/**
 * Everything observed during one run, and seed 003's invariants over it: a commit only after
 * the target applied the barrier, one home per (authority, epoch) and epochs only grow, one
 * key one move, a cancelled or timed-out transfer moves nothing and writes no audit, and every
 * committed audit reaches every voter present at commit (or it left).
 */
export class Observer {
  /** id -> barriers the id was started with, per origin feed (member and incarnation). */
  readonly started = new Map<string, { origin: FeedOrigin; barrier: number }[]>();
  /** id -> number of real moves (entries that minted an epoch). */
  readonly moves = new Map<string, number>();
  readonly committed = new Map<string, { record: AuditRecord; voters: string[] }>();
  /** Keys whose run ended cancelled or timed out, and that were never retried. */
  readonly abandoned = new Set<string>();
  /**
   * Keys a run left claimed with an unknown outcome: that member resolves them in the background
   * by re-proposing under the key, so the key may still move whatever a later run of it, on
   * another member, answers (see runEnded).
   */
  readonly inDoubt = new Set<string>();
  /** Runs of an in-doubt key cancelled or timed out on another member (not promises of "nothing moved"). */
  crossMemberCancels = 0;
  readonly homes = new Map<string, Map<number, string>>();
  readonly lastEpoch = new Map<string, number>();
  readonly removedVoters = new Set<string>();

  constructor(private readonly cluster: ObservedCluster) {
    cluster.watchLog((view, entry) => {
      const { command, result } = entry;
      if (command.type === 'transfer_authority' && result.ok && 'home' in result) {
        this.epochMinted(command.authority, result.epoch, result.home);
      }
      if (command.type === 'commit_planned_transfer' && result.ok && 'record' in result) {
        const record = result.record;
        if (record.commit_index !== entry.position.index) return; // answered from the sealed record, no move
        this.epochMinted(record.authority, record.epoch, record.target);
        this.moves.set(record.id, (this.moves.get(record.id) ?? 0) + 1);
        if (this.moves.get(record.id)! > 1)
          this.record(`one key, one move: ${record.id} moved twice`);
        const barriers = this.started.get(record.id) ?? [];
        const justified = barriers.some(
          (b) =>
            b.barrier === record.barrier &&
            cluster.roster
              .membersOf(record.target)
              .every((m) => cluster.members.get(m.id)!.holds(b.origin) >= b.barrier),
        );
        if (!justified)
          this.record(`${record.id} committed before the target applied barrier ${record.barrier}`);
        this.committed.set(record.id, {
          record,
          voters: view.state.pending[record.id]?.awaiting ?? [],
        });
      }
    });
  }

  private epochMinted(authority: string, epoch: number, home: string): void {
    const last = this.lastEpoch.get(authority) ?? 0;
    if (epoch <= last) this.record(`epochs only grow: ${authority} went from ${last} to ${epoch}`);
    this.lastEpoch.set(authority, epoch);
    const byEpoch = this.homes.get(authority) ?? new Map<number, string>();
    if (byEpoch.has(epoch) && byEpoch.get(epoch) !== home)
      this.record(`two homes for ${authority} at epoch ${epoch}`);
    byEpoch.set(epoch, home);
    this.homes.set(authority, byEpoch);
  }

  /** Violations seen inside a consensus watcher, where throwing would only reach the log. */
  private readonly violations: string[] = [];

  private record(message: string): void {
    this.violations.push(message);
  }

  fail(message: string): never {
    throw new InvariantViolation(message);
  }

  /**
   * How a run of `id` ended. Cancelled or timed out with nothing moved, the key must never move
   * (no audit either) — unless an earlier run of it is in doubt: plans are per member, so
   * another member's cancel cannot stop that member's background resolution.
   */
  runEnded(id: string, error: unknown): void {
    if (error instanceof TransferOutcomeUnknownError) this.inDoubt.add(id);
    if (!(error instanceof TransferCancelledError || error instanceof CatchUpTimeoutError)) return;
    if (this.moves.has(id)) return;
    if (this.inDoubt.has(id)) this.crossMemberCancels += 1;
    else this.abandoned.add(id);
  }

  /** Checked after every step. */
  async checkStep(): Promise<void> {
    if (this.violations.length > 0) this.fail(this.violations[0]);
    for (const id of this.abandoned) {
      if (this.moves.has(id)) this.fail(`${id} was cancelled or timed out, yet it moved`);
      for (const m of this.cluster.members.values()) {
        const stored = await m.audit.byId(id).catch(() => undefined); // a store that is down shows nothing
        if (stored) this.fail(`${id} was cancelled or timed out, yet ${m.id} has its audit`);
      }
    }
  }

  /** Checked once the cluster healed: every committed audit reached every voter present at commit, or it left. */
  async checkFinal(): Promise<void> {
    await this.checkStep();
    for (const [id, { record, voters }] of this.committed) {
      for (const voter of voters) {
        if (this.removedVoters.has(voter)) continue;
        const stored = await this.cluster.members.get(voter)!.audit.byId(id);
        if (!stored)
          this.fail(
            `${id} never reached the audit store of ${voter}, a voter present at its commit`,
          );
        if (JSON.stringify(stored) !== JSON.stringify(record))
          this.fail(`${voter} stored a different record for ${id}`);
      }
    }
    const pending = this.cluster.pendingAudits();
    if (pending.length > 0) this.fail(`records still pending after healing: ${pending.join(', ')}`);
  }
}
