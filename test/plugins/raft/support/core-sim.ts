import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import type { Message } from '@baton/plugin-raft/internal/core/types.js';
import { CoreNode } from './core-node.js';
import { fmtMessage } from './format.js';
import { SafetyChecker, SafetyViolation } from './safety-checker.js';

export interface SimFaults {
  drop: number;
  duplicate: number;
  maxDelayMs: number;
}

interface InFlight {
  at: number;
  seq: number;
  m: Message;
}

interface Member {
  node: CoreNode;
  crashedUntil: number;
  pausedUntil: number;
  tickOffset: number;
  /** Milliseconds between ticks: above TICK_MS while the member's clock runs slow. */
  tickEvery: number;
  slowUntil: number;
}

interface Proposal {
  index: number;
  term: number;
  value: string;
}

export interface SimReport {
  seed: number;
  proposals: number;
  committed: number;
  lost: number;
  elections: number;
  restarts: number;
  snapshotsSent: number;
  reads: number;
  confChanges: number;
  /** Leaders that crashed after sending appends, before persisting them. */
  crashesBeforePersist: number;
}

const TICK_MS = 10;
const FAULT_MS = 3_000;
const HEAL_DEADLINE_MS = 4_000;
const POOL = ['n1', 'n2', 'n3', 'n4', 'n5'];

/**
 * A deterministic run of five cores on a simulated network and disks, driven by one seed: a
 * fault phase (drops, delays, duplicates, reordering, partitions, crash-restarts that lose what
 * was not persisted, pauses, compaction, leadership transfers, membership changes, reads), then
 * a healed phase that must elect a leader and decide every proposal. Every millisecond with
 * activity is followed by the safety checks; a violation names the seed.
 */
export class CoreSimulation {
  private readonly rng: SeededRng;
  private readonly net: SeededRng;
  private readonly chaos: SeededRng;
  private readonly members = new Map<string, Member>();
  private queue: InFlight[] = [];
  private seq = 0;
  private now = 0;
  private groups: string[][] | undefined;
  private faults: SimFaults;
  readonly checker = new SafetyChecker();
  private readonly proposals: Proposal[] = [];
  private readonly pendingReads = new Map<string, { member: string; floor: number }>();
  private readonly ledTerm = new Map<string, number>();
  private readonly answeredReads = new Set<string>();
  private readonly trace: string[] = [];
  private readonly report: SimReport;

  constructor(readonly seed: number) {
    this.rng = new SeededRng(seed);
    this.net = this.rng.fork('network');
    this.chaos = this.rng.fork('faults');
    this.report = {
      seed,
      proposals: 0,
      committed: 0,
      lost: 0,
      elections: 0,
      restarts: 0,
      snapshotsSent: 0,
      reads: 0,
      confChanges: 0,
      crashesBeforePersist: 0,
    };
    const voters = this.chaos.chance(0.5) ? POOL.slice(0, 3) : POOL.slice();
    this.faults = {
      drop: this.chaos.pick([0, 0.02, 0.1, 0.3]),
      duplicate: this.chaos.pick([0, 0.05, 0.2]),
      maxDelayMs: this.chaos.pick([2, 10, 40, 120]),
    };
    for (const id of POOL) {
      const node = new CoreNode(id, voters, this.rng.fork(`election-${id}`), {
        electionTicks: 10,
        heartbeatTicks: 1,
        maxInflight: this.chaos.pick([1, 4, 64]),
        maxEntriesPerMessage: this.chaos.pick([1, 3, 16]),
      });
      this.members.set(id, {
        node,
        crashedUntil: -1,
        pausedUntil: -1,
        tickOffset: this.chaos.int(TICK_MS),
        tickEvery: TICK_MS,
        slowUntil: -1,
      });
    }
  }

  run(): SimReport {
    try {
      for (; this.now < FAULT_MS; this.now++) this.stepMs(true);
      this.heal();
      const deadline = this.now + HEAL_DEADLINE_MS;
      for (; this.now < deadline; this.now++) {
        this.stepMs(false);
        if (this.settled()) break;
      }
      this.checker.check(this.nodes(), true);
      if (!this.settled())
        throw new SafetyViolation(
          `liveness: not settled ${HEAL_DEADLINE_MS} ms after healing: ${this.describe()}`,
        );
      this.decideProposals();
      return this.report;
    } catch (error) {
      const replay = `SIM_SEED=${this.seed} npx ava dist/test/plugins/raft/sim.test.js`;
      const message = `seed ${this.seed} failed at ${this.now} ms: ${(error as Error).message}\nreplay: ${replay}\nlast events:\n${this.trace.slice(-40).join('\n')}`;
      throw new SafetyViolation(message, { cause: error });
    }
  }

  private nodes(): CoreNode[] {
    return [...this.members.values()].map((m) => m.node);
  }

  private up(m: Member): boolean {
    return this.now >= m.crashedUntil && this.now >= m.pausedUntil;
  }

  private log(line: string): void {
    this.trace.push(`${this.now}ms ${line}`);
    if (this.trace.length > 200) this.trace.splice(0, 100);
  }

  private stepMs(faulty: boolean): void {
    let active = false;
    for (const m of this.members.values()) {
      if (m.crashedUntil === this.now) {
        m.node.restart();
        this.report.restarts++;
        this.log(
          `${m.node.id} restarted at term ${m.node.core.term} commit ${m.node.core.log.committed}`,
        );
        active = true;
      }
    }
    // Deliver what is due (a paused member's messages wait; a crashed one's are lost).
    const due = this.queue.filter((f) => f.at <= this.now);
    if (due.length > 0) {
      this.queue = this.queue.filter((f) => f.at > this.now);
      for (const f of due.sort((a, b) => a.at - b.at || a.seq - b.seq)) {
        const to = this.members.get(f.m.to)!;
        if (this.now < to.crashedUntil) continue;
        if (this.now < to.pausedUntil) {
          this.queue.push({ ...f, at: to.pausedUntil });
          continue;
        }
        to.node.step(f.m);
        active = true;
      }
    }
    for (const m of this.members.values()) {
      if (m.slowUntil === this.now) m.tickEvery = TICK_MS;
      if (this.up(m) && this.now % m.tickEvery === m.tickOffset % m.tickEvery) {
        m.node.core.tick();
        active = true;
      }
    }
    if (faulty) active = this.chaosStep() || active;
    else active = this.healedStep() || active;
    for (const m of this.members.values())
      if (this.up(m)) active = this.process(m, faulty) || active;
    if (active) this.checker.check(this.nodes(), this.now % 100 === 0);
  }

  private process(member: Member, faulty: boolean): boolean {
    const node = member.node;
    if (!node.core.hasReady()) return false;
    const crashAfterPersist = faulty && this.chaos.chance(0.002);
    // A leader sends its appends before its own disk write; crashing in between loses its copy
    // of entries the followers may already hold (and commit without it).
    const crashBeforePersist = faulty && this.chaos.chance(0.01);
    const rd = node.processReady({
      crashAfterPersist,
      crashBeforePersist,
      sendEarly: (messages) => {
        for (const msg of messages) this.send(msg);
      },
      beforePersist: (r) => this.checker.recordPersisted(node, r.entries, r.snapshot),
    });
    if (!rd) {
      // Crashed after the disk write, before anything was sent or applied; or a leader crashed
      // after sending its appends, before writing them.
      this.log(
        `${node.id} crashes ${node.crashed === 'before-persist' ? 'after sending, before persisting' : 'after persisting'}`,
      );
      if (node.crashed === 'before-persist') this.report.crashesBeforePersist++;
      this.crash(member, 1 + this.chaos.int(300));
      return true;
    }
    if (rd.snapshot)
      this.log(`${node.id} restored snapshot ${rd.snapshot.meta.term}/${rd.snapshot.meta.index}`);
    if (!rd.messagesFirst) for (const msg of rd.messages) this.send(msg);
    for (const r of rd.readStates) this.checkRead(node.id, r.index, r.context);
    if (node.core.role === 'leader' && this.ledTerm.get(node.id) !== node.core.term) {
      this.ledTerm.set(node.id, node.core.term);
      this.report.elections++;
      this.log(`${node.id} leads term ${node.core.term}`);
    }
    return true;
  }

  private send(m: Message): void {
    if (m.type === 'snap') this.report.snapshotsSent++;
    if (this.cut(m.from, m.to)) return;
    if (this.net.chance(this.faults.drop)) return;
    const copies = this.net.chance(this.faults.duplicate) ? 2 : 1;
    for (let i = 0; i < copies; i++) {
      this.queue.push({
        at: this.now + 1 + this.net.int(this.faults.maxDelayMs),
        seq: this.seq++,
        m,
      });
    }
  }

  private cut(a: string, b: string): boolean {
    if (!this.groups) return false;
    const g = (id: string) => this.groups!.findIndex((grp) => grp.includes(id));
    return g(a) !== g(b);
  }

  private crash(member: Member, forMs: number): void {
    member.crashedUntil = this.now + forMs;
    member.pausedUntil = -1;
  }

  private leader(): CoreNode | undefined {
    let best: CoreNode | undefined;
    for (const m of this.members.values()) {
      if (!this.up(m) || m.node.core.role !== 'leader') continue;
      if (!best || m.node.core.term > best.core.term) best = m.node;
    }
    return best;
  }

  /** One millisecond of bad luck: each fault has a small chance. */
  private chaosStep(): boolean {
    const c = this.chaos;
    let acted = false;
    if (c.chance(0.05)) acted = this.propose() || acted;
    if (c.chance(0.0015)) {
      const ids = POOL.slice();
      const cut = 1 + c.int(ids.length - 1);
      for (let i = ids.length - 1; i > 0; i--) {
        const j = c.int(i + 1);
        [ids[i], ids[j]] = [ids[j], ids[i]];
      }
      this.groups = [ids.slice(0, cut), ids.slice(cut)];
      this.log(`partition ${this.groups.map((g) => g.join(' ')).join(' | ')}`);
      acted = true;
    }
    if (this.groups && c.chance(0.002)) {
      this.groups = undefined;
      this.log('heal partition');
    }
    if (c.chance(0.001)) {
      const m = this.members.get(c.pick(POOL))!;
      if (this.up(m)) {
        this.log(`${m.node.id} crashes (unpersisted state lost)`);
        this.crash(m, 1 + c.int(400));
        acted = true;
      }
    }
    if (c.chance(0.001)) {
      const m = this.members.get(c.pick(POOL))!;
      if (this.up(m)) {
        m.pausedUntil = this.now + 1 + c.int(300);
        this.log(`${m.node.id} pauses until ${m.pausedUntil}`);
      }
    }
    if (c.chance(0.001)) {
      // Clock drift: this member's timers run slow, the case leases get wrong and ReadIndex not.
      const m = this.members.get(c.pick(POOL))!;
      m.tickEvery = TICK_MS * (2 + c.int(4));
      m.slowUntil = this.now + 100 + c.int(900);
      this.log(`${m.node.id} ticks every ${m.tickEvery} ms until ${m.slowUntil}`);
    }
    if (c.chance(0.01)) {
      const m = this.members.get(c.pick(POOL))!;
      const n = m.node;
      if (this.up(m) && n.state.index - n.disk.snapshot().meta.index > 8) {
        n.compact(n.state.index - c.int(5));
        this.log(`${n.id} compacts to ${n.disk.firstIndex() - 1}`);
      }
    }
    const leader = this.leader();
    if (leader && c.chance(0.0008)) {
      const to = c.pick(leader.core.voters());
      leader.core.transferLeader(to);
      this.log(`${leader.id} transfers leadership to ${to}`);
    }
    if (leader && c.chance(0.001)) {
      const voters = leader.core.voters();
      const outside = POOL.filter((id) => !voters.includes(id));
      const add = outside.length > 0 && (voters.length <= 3 || c.chance(0.5));
      const member = add ? c.pick(outside) : c.pick(voters);
      if (add || voters.length > 2) {
        const r = leader.core.proposeConfChange({ type: add ? 'add' : 'remove', member });
        if (r.ok) {
          this.report.confChanges++;
          this.log(
            `${leader.id} proposes ${add ? 'add' : 'remove'} ${member} at ${r.term}/${r.index}`,
          );
        }
      }
    }
    if (c.chance(0.03)) {
      const m = this.members.get(c.pick(POOL))!;
      if (this.up(m)) {
        const context = `r${this.seq++}`;
        // Linearizable: the answer must cover everything committed before the request.
        this.pendingReads.set(context, { member: m.node.id, floor: this.checker.maxCommitted });
        m.node.core.readIndex(context);
      }
    }
    return acted;
  }

  private propose(): boolean {
    const leader = this.leader();
    if (!leader) return false;
    const value = `v${this.report.proposals}`;
    const r = leader.core.propose(value);
    if (!r.ok) return false;
    this.report.proposals++;
    this.proposals.push({ index: r.index, term: r.term, value });
    return true;
  }

  private checkRead(member: string, index: number, context: string): void {
    const req = this.pendingReads.get(context);
    // Duplicated requests are answered again: each answer must be safe, each read counts once.
    if (!req)
      throw new SafetyViolation(`read-index: unknown read ${context} answered at ${member}`);
    if (req.member !== member)
      throw new SafetyViolation(
        `read-index: ${context} answered at ${member}, asked at ${req.member}`,
      );
    if (index < req.floor) {
      throw new SafetyViolation(
        `read-index: ${context} served index ${index}, but ${req.floor} was committed before it was asked`,
      );
    }
    if (!this.answeredReads.has(context)) this.report.reads++;
    this.answeredReads.add(context);
  }

  private heal(): void {
    this.groups = undefined;
    this.faults = { drop: 0, duplicate: 0, maxDelayMs: 5 };
    for (const m of this.members.values()) {
      if (this.now < m.crashedUntil) m.crashedUntil = this.now + 1;
      m.pausedUntil = -1;
      m.tickEvery = TICK_MS;
    }
    this.log('healed: no more faults');
    this.finalProposal = undefined;
  }

  private finalProposal: Proposal | undefined;

  private healedStep(): boolean {
    const leader = this.leader();
    if (!leader) return false;
    const f = this.finalProposal;
    const lost =
      f && leader.core.log.term(f.index) !== f.term && leader.core.log.committed >= f.index;
    if (!f || lost || f.term !== leader.core.term) {
      const r = leader.core.propose('final');
      if (r.ok) {
        this.finalProposal = { index: r.index, term: r.term, value: 'final' };
        this.proposals.push(this.finalProposal);
        return true;
      }
    }
    return false;
  }

  /** A leader whose final proposal is applied on every voter, with all logs equal to its own. */
  private settled(): boolean {
    const leader = this.leader();
    const f = this.finalProposal;
    if (!leader || !f) return false;
    if (this.checker.committed.get(f.index) !== f.term) return false;
    for (const id of leader.core.voters()) {
      const m = this.members.get(id)!;
      if (!this.up(m) || m.node.state.index < leader.core.log.lastIndex()) return false;
    }
    return true;
  }

  /** Every proposal is now either committed at its position or certainly lost. */
  private decideProposals(): void {
    const leader = this.leader()!;
    this.report.proposals = this.proposals.length;
    for (const p of this.proposals) {
      const committedTerm = this.checker.committed.get(p.index);
      if (committedTerm === p.term) this.report.committed++;
      else if (committedTerm !== undefined || p.index > leader.core.log.lastIndex())
        this.report.lost++;
      else
        throw new SafetyViolation(
          `proposal ${p.value} at ${p.term}/${p.index} is undecided after healing`,
        );
    }
  }

  private describe(): string {
    return [...this.members.values()]
      .map((m) => {
        const c = m.node.core;
        return `${c.id}:${c.role}@${c.term} lead=${c.lead || '-'} commit=${c.log.committed} last=${c.log.lastIndex()} voters=[${c.voters().join(',')}]${this.up(m) ? '' : ' down'}`;
      })
      .join('; ');
  }

  /** For debugging a failing seed: the in-flight messages. */
  pending(): string[] {
    return this.queue.map((f) => `${f.at}: ${fmtMessage(f.m)}`);
  }
}
