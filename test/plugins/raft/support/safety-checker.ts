import type { Entry, Snapshot } from '@baton/plugin-raft/internal/core/types.js';
import type { CoreNode } from './core-node.js';

/** A broken Raft property, with what was seen. */
export class SafetyViolation extends Error {}

/**
 * Checks the five Raft safety properties (Figure 3 of the Raft paper) plus durability rules,
 * from the outside, against every member, after every step of a run:
 * - election safety: at most one leader per term;
 * - leader append-only: a leader never removes or rewrites its own entries;
 * - log matching: an (index, term) pair names one entry and one whole prefix;
 * - leader completeness: a leader holds every entry committed before it;
 * - state machine safety: every member applies the same entry at the same index;
 * - hard state: term and commit never go backwards on disk, a vote once cast in a term never
 *   changes, and a restarted member comes back with its durable term and commit.
 */
export class SafetyChecker {
  private readonly leaders = new Map<number, string>();
  private readonly entries = new Map<string, { prevTerm: number; data: string }>();
  /** index -> term of every entry known committed. */
  readonly committed = new Map<number, number>();
  maxCommitted = 0;
  private readonly appliedDigest = new Map<number, string>();
  private readonly leaderTail = new Map<string, { index: number; term: number }>();
  private readonly lastCommit = new Map<string, number>();
  private readonly lastHard = new Map<string, { term: number; vote: string; commit: number }>();
  private readonly checkedLeaders = new Set<string>();

  check(nodes: Iterable<CoreNode>, full = false): void {
    for (const n of nodes) {
      this.checkHardState(n);
      this.checkElection(n);
      this.checkCommits(n);
      this.checkApplied(n);
      if (full) this.checkLogMatching(n);
    }
  }

  /** Records entries as they are persisted; call with each Ready before it is applied. */
  recordPersisted(n: CoreNode, entries: readonly Entry[], snapshot: Snapshot | undefined): void {
    if (snapshot) this.recordCommitted(n.id, snapshot.meta.index, snapshot.meta.term);
    for (const e of entries) this.recordEntry(n.id, e, n.core.log.term(e.index - 1));
  }

  private recordEntry(who: string, e: Entry, prevTerm: number | undefined): void {
    if (prevTerm === undefined) return;
    const key = `${e.index}/${e.term}`;
    const data = `${e.type}:${JSON.stringify(e.data)}`;
    const seen = this.entries.get(key);
    if (!seen) {
      this.entries.set(key, { prevTerm, data });
      return;
    }
    if (seen.prevTerm !== prevTerm || seen.data !== data) {
      throw new SafetyViolation(
        `log matching: ${who} holds ${key} = ${data} after term ${prevTerm}, elsewhere ${seen.data} after term ${seen.prevTerm}`,
      );
    }
  }

  private checkLogMatching(n: CoreNode): void {
    const log = n.core.log;
    const entries = log.slice(log.firstIndex(), log.lastIndex() + 1) ?? [];
    for (const e of entries) this.recordEntry(n.id, e, log.term(e.index - 1));
  }

  private checkElection(n: CoreNode): void {
    const core = n.core;
    if (core.role !== 'leader') return;
    const holder = this.leaders.get(core.term);
    if (holder !== undefined && holder !== n.id) {
      throw new SafetyViolation(`election safety: ${holder} and ${n.id} both lead term ${core.term}`);
    }
    this.leaders.set(core.term, n.id);
    const log = core.log;
    const key = `${n.id}/${core.term}/${n.restarts}`;
    // Leader completeness, once per leadership: everything committed so far is in its log.
    if (!this.checkedLeaders.has(key)) {
      this.checkedLeaders.add(key);
      if (log.lastIndex() < this.maxCommitted) {
        throw new SafetyViolation(
          `leader completeness: ${n.id} leads term ${core.term} with last index ${log.lastIndex()} < committed ${this.maxCommitted}`,
        );
      }
      for (const [index, term] of this.committed) {
        const mine = log.term(index);
        if (mine !== undefined && mine !== term) {
          throw new SafetyViolation(
            `leader completeness: ${n.id} (term ${core.term}) has term ${mine} at ${index}, committed term ${term}`,
          );
        }
      }
    }
    // Leader append-only: the last entry we saw is still there, and the log did not shrink.
    const tail = this.leaderTail.get(key);
    if (tail && tail.index >= log.firstIndex() - 1) {
      if (log.lastIndex() < tail.index || log.term(tail.index) !== tail.term) {
        throw new SafetyViolation(
          `leader append-only: ${n.id} (term ${core.term}) lost or rewrote ${tail.term}/${tail.index}`,
        );
      }
    }
    this.leaderTail.set(key, { index: log.lastIndex(), term: log.lastTerm() });
  }

  private recordCommitted(who: string, index: number, term: number): void {
    const seen = this.committed.get(index);
    if (seen !== undefined && seen !== term) {
      throw new SafetyViolation(`commit: ${who} committed term ${term} at ${index}, elsewhere term ${seen}`);
    }
    this.committed.set(index, term);
    if (index > this.maxCommitted) this.maxCommitted = index;
  }

  private checkCommits(n: CoreNode): void {
    const log = n.core.log;
    const key = `${n.id}/${n.restarts}`;
    const from = Math.max(this.lastCommit.get(key) ?? 0, log.firstIndex() - 1);
    if (log.committed > from) {
      const entries = log.slice(from + 1, log.committed + 1);
      for (const e of entries ?? []) this.recordCommitted(n.id, e.index, e.term);
    }
    this.lastCommit.set(key, log.committed);
  }

  private checkApplied(n: CoreNode): void {
    for (const a of n.applied) {
      const seen = this.appliedDigest.get(a.entry.index);
      if (seen !== undefined && seen !== a.digest) {
        throw new SafetyViolation(
          `state machine safety: ${n.id} applied ${a.entry.term}/${a.entry.index} reaching state ${a.digest}, others reached ${seen}`,
        );
      }
      this.appliedDigest.set(a.entry.index, a.digest);
      this.recordCommitted(n.id, a.entry.index, a.entry.term);
    }
    n.applied = [];
  }

  private checkHardState(n: CoreNode): void {
    const disk = n.disk.hardState();
    const prev = this.lastHard.get(n.id);
    if (prev) {
      if (disk.term < prev.term || disk.commit < prev.commit) {
        throw new SafetyViolation(
          `durability: ${n.id} hard state went back from term ${prev.term} commit ${prev.commit} to term ${disk.term} commit ${disk.commit}`,
        );
      }
      if (disk.term === prev.term && prev.vote !== '' && disk.vote !== prev.vote) {
        throw new SafetyViolation(`double vote: ${n.id} voted ${prev.vote} then ${disk.vote} in term ${disk.term}`);
      }
    }
    if (n.core.term < disk.term) {
      throw new SafetyViolation(`durability: ${n.id} runs at term ${n.core.term} below its durable term ${disk.term}`);
    }
    if (n.core.log.committed < disk.commit) {
      throw new SafetyViolation(`durability: ${n.id} commit ${n.core.log.committed} below its durable commit ${disk.commit}`);
    }
    this.lastHard.set(n.id, disk);
  }
}
