import type { AuditRecord } from '@baton/contracts/internal/audit-store.js';
import type { AppliedEntry, AppliedView } from '@baton/contracts/internal/metadata-consensus.js';
import type { FeedEntry, FeedOrigin } from '@baton/authority-transfer/internal/change-feed.js';
import type {
  OwnershipCommand,
  OwnershipResult,
  OwnershipState,
} from '@baton/authority-transfer/internal/ownership.js';
import type { Roster } from '@baton/authority-transfer/internal/roster.js';
import {
  CatchUpTimeoutError,
  TransferCancelledError,
  TransferOutcomeUnknownError,
  TransferReleasedError,
} from '@baton/authority-transfer/internal/transfer-errors.js';
import { driverInvariants, planInvariants, registrationInvariants, stepViolations } from '@baton/authority-transfer/internal/transfer-invariants.js';
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

/** A write a member acknowledged: its place in that member's feed. */
interface AcknowledgedWrite {
  member: string;
  origin: FeedOrigin;
  serial: number;
  epoch: number;
}

/**
 * Everything observed during one run, and the invariants over it: at every commit, the target
 * has applied every write any member acknowledged for that authority under the old epoch (a
 * target member that lost its disk after the last probe excepted), and a new home acknowledges
 * no write under the new epoch before it holds all of them; one
 * home per (authority, epoch) and epochs only grow; one key one move; a cancelled or timed-out
 * transfer moves nothing and writes no audit (a transfer released by a cancel at any member
 * never commits); and every committed audit reaches every voter present at commit (or it left).
 */
/** What a run's end is checked against: the cancels sent for its authority before it started. */
export interface RunStart {
  authority: string;
  cancelsBefore: number;
}

export class Observer {
  /** authority -> the writes acknowledged to it. */
  readonly acknowledged = new Map<string, AcknowledgedWrite[]>();
  /** Transfer ids a cancel released in the replicated state (at whichever member). */
  readonly releasedByCancel = new Set<string>();
  /** Commits checked against the acknowledged writes of their old epoch. */
  checkedCommits = 0;
  /** id -> number of real moves (entries that minted an epoch). */
  readonly moves = new Map<string, number>();
  readonly committed = new Map<string, { record: AuditRecord; voters: string[] }>();
  /** Keys whose run ended cancelled, released or timed out: none of them may ever move. */
  readonly abandoned = new Set<string>();
  /**
   * Keys a run left claimed with an unknown outcome, and the member resolving them in the
   * background (by re-proposing the commit under the key).
   */
  readonly inDoubt = new Map<string, string>();
  /**
   * Runs of a key in doubt on one member that ended cancelled (or released, or timed out) on
   * another: each is held to "nothing moves" like any other abandoned key, since the cancel
   * released the registration in the replicated state before the in-doubt commit could land.
   */
  crossMemberCancels = 0;
  /**
   * Transfers registered when a cancel (at any member) was asked, which it answered 204: each
   * must never commit. `cancelThenCommit` counts those that did (a violation: it stays 0).
   */
  readonly cancelledWhileRegistered = new Map<string, string>();
  cancelsOfRegistered = 0;
  cancelThenCommit = 0;
  readonly homes = new Map<string, Map<number, string>>();
  readonly lastEpoch = new Map<string, number>();
  readonly removedVoters = new Set<string>();
  /** `${transfer}|${member}`: a member of the target lost its disk after the last probe, before the commit. */
  readonly lostBeforeCommit = new Set<string>();
  /** Commits whose target had a member lose its disk after the last probe (checked at its writes instead). */
  commitsAfterDiskLoss = 0;
  /** `${authority}@${epoch}` -> the planned commit that minted the epoch. */
  private readonly plannedEpochs = new Map<string, AuditRecord>();
  /**
   * `${authority}@${epoch}|${member}` -> the member's boots when the move applied; gone once
   * its settle applied: from then on the home owns the data (a disk it loses later is its own).
   */
  private readonly unsettledAtHome = new Map<string, number>();
  /** Writes a new home acknowledged before it settled, checked against every write acknowledged under the old epoch. */
  checkedHomeWrites = 0;
  /** Settles checked the same way (those of a member that restarted since the move are not: it may have settled before). */
  checkedSettles = 0;

  constructor(private readonly cluster: ObservedCluster) {
    cluster.watchLog((view, entry) => {
      const { command, result } = entry;
      if (command.type === 'transfer_authority' && result.ok && 'home' in result) {
        this.epochMinted(command.authority, result.epoch, result.home);
      }
      // A key registered anew after a cancel is a new request under the same key (the operator
      // reissued it): only the engine's own re-proposals are held to the cancel.
      if (command.type === 'register_transfer' && result.ok && 'existing' in result && !result.existing) {
        this.releasedByCancel.delete(command.id);
      }
      if (command.type === 'release_transfer' && command.why === 'cancelled' && result.ok && 'intent' in result) {
        this.releasedByCancel.add(result.intent.id);
      }
      if (command.type === 'settle_catch_up' && result.ok) this.settled(command.authority, command.epoch, command.member);
      if (command.type === 'commit_planned_transfer' && result.ok && 'record' in result) {
        const record = result.record;
        if (record.commit_index !== entry.position.index) return; // answered from the sealed record, no move
        this.epochMinted(record.authority, record.epoch, record.target);
        this.moves.set(record.id, (this.moves.get(record.id) ?? 0) + 1);
        if (this.moves.get(record.id)! > 1)
          this.record(`one key, one move: ${record.id} moved twice`);
        if (this.releasedByCancel.has(record.id))
          this.record(`${record.id} committed after a cancel released it`);
        if (this.cancelledWhileRegistered.has(record.id)) {
          this.cancelThenCommit += 1;
          this.record(`${record.id} committed after a cancel at ${this.cancelledWhileRegistered.get(record.id)} answered 204 while it was registered`);
        }
        this.plannedEpochs.set(`${record.authority}@${record.epoch}`, record);
        for (const m of this.cluster.roster.membersOf(record.target)) {
          this.unsettledAtHome.set(`${record.authority}@${record.epoch}|${m.id}`, this.cluster.members.get(m.id)!.boots);
        }
        this.checkCovered(record);
        this.committed.set(record.id, {
          record,
          voters: view.state.pending.get(record.id)?.awaiting ?? [],
        });
      }
    });
  }

  /**
   * A cancel at `member` answered 204; `registered` is the transfer the replicated state held
   * for the authority when the cancel was asked (if any): that transfer must never commit.
   */
  cancelAnswered(member: string, registered: string | undefined): void {
    if (registered === undefined || this.moves.has(registered)) return;
    this.cancelsOfRegistered += 1;
    this.cancelledWhileRegistered.set(registered, member);
  }

  /** A member of `transfer`'s target lost its disk after the last probe and before the commit applied. */
  diskLostBeforeCommit(transfer: string, member: string): void {
    this.lostBeforeCommit.add(`${transfer}|${member}`);
  }

  /**
   * `member` loses its disk at a random crash: every transfer to its datacenter already past its
   * last probe (frozen, every final in) as any member's view shows it is in the case above, which
   * no probe can see and the new home's catch-up covers. Its own view may lag the log, so every
   * member's is looked at.
   */
  targetLosesDisk(member: SimMember): void {
    for (const m of this.cluster.members.values()) {
      if (m.down) continue;
      for (const intent of m.consensus.view().state.transfers.values()) {
        if (intent.target === member.datacenter && intent.frozen && intent.sources.every((s) => s.final !== undefined)) this.diskLostBeforeCommit(intent.id, member.id);
      }
    }
  }

  /**
   * A member of the new home settled the move's catch-up: it must hold every write acknowledged
   * under the old epoch. Checked at the apply, which comes after the member proposed it: valid
   * only if the member did not restart since the move (its replicas only grew meanwhile).
   */
  private settled(authority: string, epoch: number, member: string): void {
    const key = `${authority}@${epoch}|${member}`;
    const boots = this.unsettledAtHome.get(key);
    if (boots === undefined) return;
    this.unsettledAtHome.delete(key);
    if (this.cluster.members.get(member)?.boots !== boots) return;
    this.checkedSettles += 1;
    const short = this.missingAt(member, authority, epoch - 1);
    if (short) this.record(`${member} settled the catch-up of ${authority} at epoch ${epoch} while ${short}`);
  }

  /**
   * Records a write a member acknowledged (its fence resolved with the feed entry). Until it
   * settled, a new home acknowledges a write under the epoch a planned move minted only while it
   * holds every write acknowledged under the old epoch: the barrier holds at the new home even
   * when its replica was lost after the driver's last probe.
   */
  acknowledgedWrite(member: SimMember, entry: FeedEntry): void {
    const planned = this.plannedEpochs.get(`${entry.authority}@${entry.epoch}`);
    if (planned && this.unsettledAtHome.has(`${entry.authority}@${entry.epoch}|${member.id}`)) {
      this.checkedHomeWrites += 1;
      const short = this.missingAt(member.id, entry.authority, entry.epoch - 1);
      if (short) this.record(`${member.id} acknowledged a write to ${entry.authority} under epoch ${entry.epoch} (moved by ${planned.id}) while ${short}`);
    }
    const list = this.acknowledged.get(entry.authority) ?? [];
    list.push({ member: member.id, origin: member.feed.origin(), serial: entry.serial, epoch: entry.epoch });
    this.acknowledged.set(entry.authority, list);
  }

  /**
   * Every write acknowledged to the authority under the epoch the commit ends is held by every
   * member of the target, but one that lost its disk after the last probe.
   */
  private checkCovered(record: AuditRecord): void {
    this.checkedCommits += 1;
    let lost = false;
    for (const m of this.cluster.roster.membersOf(record.target)) {
      // Lost after the last probe: no commit can see it; its writes are checked at the home instead.
      if (this.lostBeforeCommit.has(`${record.id}|${m.id}`)) {
        lost = true;
        continue;
      }
      const short = this.missingAt(m.id, record.authority, record.epoch - 1);
      if (short) this.record(`${record.id} committed ${record.authority} at epoch ${record.epoch} while ${short}`);
    }
    if (lost) this.commitsAfterDiskLoss += 1;
  }

  /**
   * What `member` lacks of the writes acknowledged to `authority` under `epoch` (undefined: it
   * holds them all). A write acknowledged in a feed incarnation its member has since lost (its
   * disk was lost with it) is no longer anywhere to be held: the simulation's disk loss, not
   * the transfer, lost it.
   */
  private missingAt(member: string, authority: string, epoch: number): string | undefined {
    for (const write of this.acknowledged.get(authority) ?? []) {
      if (write.epoch !== epoch) continue;
      const writer = this.cluster.members.get(write.member)!;
      if (writer.feed.incarnation !== write.origin.incarnation) continue;
      const held = this.cluster.members.get(member)!.holds(write.origin);
      if (held < write.serial) {
        return `${member} held ${write.member}'s feed through ${held}, short of the write it acknowledged at serial ${write.serial} under epoch ${epoch}`;
      }
    }
    return undefined;
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

  /** Cancels sent per authority so far (whatever they answered). */
  private readonly cancelsSent = new Map<string, number>();
  /** Runs answering "cancelled" with no cancel sent since they started (must stay 0). */
  unexplainedCancels = 0;

  private cancelsOf(authority: string): number {
    return this.cancelsSent.get(authority) ?? 0;
  }

  /** A run of `authority` starts: what its end is checked against. */
  runStarted(authority: string): RunStart {
    return { authority, cancelsBefore: this.cancelsOf(authority) };
  }

  /** A cancel of `authority` is sent (before its answer). */
  cancelSent(authority: string): void {
    this.cancelsSent.set(authority, this.cancelsOf(authority) + 1);
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
  runEnded(id: string, error: unknown, member: string, started?: RunStart): void {
    // "Cancelled" is the answer to a cancel: with none sent for the authority since the run
    // started, the run mistook something else (a lagging view, say) for one.
    if (error instanceof TransferCancelledError && started && this.cancelsOf(started.authority) === started.cancelsBefore) {
      this.unexplainedCancels += 1;
      this.record(`${id} answered "cancelled" at ${member} with no cancel sent for ${started.authority} since it started`);
    }
    if (error instanceof TransferOutcomeUnknownError && !this.inDoubt.has(id)) this.inDoubt.set(id, member);
    const ended = error instanceof TransferCancelledError || error instanceof CatchUpTimeoutError || error instanceof TransferReleasedError;
    if (!ended || this.moves.has(id)) return;
    if (this.inDoubt.has(id) && this.inDoubt.get(id) !== member) this.crossMemberCancels += 1;
    this.abandoned.add(id);
  }

  /** Checked after every step. */
  async checkStep(): Promise<void> {
    if (this.violations.length > 0) this.fail(this.violations[0]);
    // The invariants written beside the lifecycle: every plan each member drives, and the
    // registrations as each member's applied view holds them.
    for (const m of this.cluster.members.values()) {
      if (m.down || !m.engine) continue;
      for (const plan of m.engine.registry.all()) {
        const [violation] = planInvariants(plan);
        if (violation) this.fail(`at ${m.id}: ${violation}`);
        const [broken] = stepViolations(plan);
        if (broken) this.fail(`at ${m.id}, checked by the core: ${broken}`);
      }
      const [twice] = driverInvariants(m.engine.registry.all());
      if (twice) this.fail(`at ${m.id}: ${twice}`);
      const [left] = m.engine.registry.violations;
      if (left) this.fail(`at ${m.id}, checked by the core: ${left}`);
      const [violation] = registrationInvariants(m.consensus.view().state);
      if (violation) this.fail(`in ${m.id}'s view: ${violation}`);
    }
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
