import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import type { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { firewalled, type NemesisCluster } from './cluster.js';
import type { OperationLog } from './operation-log.js';
import { drawPartition } from './partition-shapes.js';
import { shuffle } from './seeded-shuffle.js';

/** How long the schedule waits for a restarted member to serve before it goes on. */
const RECOVERY_WAIT_MS = 3_000;

/** The nemesis's own faults, and the workload's (a failover, a drain) by the name it gives them. */
export type FaultKind = 'kill' | 'pause' | 'partition' | 'store-outage' | (string & {});

/** One fault as it happened: when it began and was healed (ms since the run started), on whom. */
export interface FaultWindow {
  kind: FaultKind;
  describe: string;
  /** The members it hit directly (the killed, the paused, the isolated side). */
  targets: string[];
  /** True when the member believed to lead at the start was among the targets. */
  hitLeader: boolean;
  start: number;
  end?: number;
}

export interface NemesisOptions {
  /** Quiet time between faults, drawn per fault. */
  quietMs?: [number, number];
  /** How long a fault lasts before it is healed, drawn per fault. */
  holdMs?: [number, number];
  /**
   * Kinds the first round begins with (in a drawn order), so a short run sees the faults its
   * test is about before its time is up; kinds the cluster cannot make are left out.
   */
  firstKinds?: readonly FaultKind[];
  /**
   * The only kinds this run makes (a workload about one kind of fault, say its aimed kills);
   * every kind the cluster can make by default.
   */
  onlyKinds?: readonly FaultKind[];
}

/**
 * The fault schedule of one run, drawn from the seed: one fault at a time (kill -9 and restart on
 * the same data, SIGSTOP/SIGCONT, a partition, a store outage), held for a while, healed, then a
 * quiet spell. Faults that cannot be made here are left out and said so in `skipped`. Real time
 * runs the schedule, so a seed replays the same choices, not the same interleaving.
 */
export class Nemesis {
  readonly windows: FaultWindow[] = [];
  readonly skipped: string[] = [];
  private kinds: FaultKind[];
  private readonly clock = new SystemClock();
  private readonly quietMs: [number, number];
  private readonly holdMs: [number, number];
  private readonly firstKinds: readonly FaultKind[];

  constructor(
    private readonly cluster: NemesisCluster,
    private readonly rng: SeededRng,
    private readonly log: OperationLog,
    options: NemesisOptions = {},
  ) {
    this.quietMs = options.quietMs ?? [600, 1500];
    this.holdMs = options.holdMs ?? [800, 2500];
    this.firstKinds = options.firstKinds ?? [];
    this.kinds = ['kill', 'pause'];
    if (cluster.firewall) this.kinds.push('partition');
    else this.skipped.push(`partitions: ${cluster.partitionsUnavailable ?? 'no firewall'}`);
    if (cluster.storeOutages.length > 0) this.kinds.push('store-outage');
    for (const fault of cluster.faults ?? []) this.kinds.push(fault.kind);
    const only = options.onlyKinds;
    if (only) this.kinds = this.kinds.filter((k) => only.includes(k));
  }

  /** Runs faults until `signal` aborts, then heals whatever is still broken. */
  async run(signal: AbortSignal): Promise<void> {
    try {
      let round = this.firstRound();
      while (!signal.aborted) {
        await this.sleep(this.draw(this.quietMs), signal);
        if (signal.aborted) break;
        // Every kind once per round, in a drawn order: a short run still sees each of them.
        if (round.length === 0) round = shuffle(this.rng, this.kinds);
        await this.fault(round.pop()!, signal);
      }
    } finally {
      await this.healAll();
    }
  }

  /** Every kind once, the ones asked for first (a round is taken from its end). */
  private firstRound(): FaultKind[] {
    const first = this.kinds.filter((k) => this.firstKinds.includes(k));
    const rest = this.kinds.filter((k) => !first.includes(k));
    return [...shuffle(this.rng, rest), ...shuffle(this.rng, first)];
  }

  private async fault(kind: FaultKind, signal: AbortSignal): Promise<void> {
    const leader = await this.cluster.leader().catch(() => undefined);
    const ids = this.cluster.members.map((m) => m.id);
    const hold = this.draw(this.holdMs);
    const target = leader !== undefined && this.rng.chance(0.5) ? leader : this.rng.pick(ids);
    const member = this.cluster.members.find((m) => m.id === target)!;
    const own = this.cluster.faults?.find((f) => f.kind === kind);
    if (own) {
      const window = this.open(kind, `${kind} on ${target}`, [target], leader);
      window.describe = await own
        .apply(target, hold, signal)
        .catch((error: Error) => `${window.describe} failed: ${error.message}`);
      window.end = this.log.now();
      return;
    }
    switch (kind) {
      case 'kill': {
        const window = this.open(
          kind,
          `kill -9 ${target}, restart after ${hold} ms`,
          [target],
          leader,
        );
        await member.process.kill();
        await this.sleep(hold, signal);
        const restarted = this.log.now();
        // The schedule goes on once the member serves, or after a while even if it does not
        // yet (a loaded machine is slow to load a node): the next fault may then overlap its
        // recovery. The window ends when the process is back.
        const ready = this.restart(target).then(() => {
          window.describe += `; serving ${Math.round(this.log.now() - restarted)} ms after the restart`;
        });
        ready.catch(() => undefined);
        window.end = restarted;
        await Promise.race([ready, this.sleep(RECOVERY_WAIT_MS, signal)]);
        return;
      }
      case 'pause': {
        const window = this.open(kind, `SIGSTOP ${target} for ${hold} ms`, [target], leader);
        member.process.pause();
        await this.sleep(hold, signal);
        member.process.resume();
        window.end = this.log.now();
        return;
      }
      case 'partition': {
        const partition = drawPartition(this.rng, ids, leader);
        const window = this.open(
          kind,
          `${partition.describe} for ${hold} ms`,
          partition.stranded,
          leader,
        );
        const byId = new Map(this.cluster.members.map((m) => [m.id, m]));
        for (const [a, b] of partition.cuts)
          await this.cluster.firewall!.cut(firewalled(byId.get(a)!), firewalled(byId.get(b)!));
        await this.sleep(hold, signal);
        await this.cluster.firewall!.heal();
        window.end = this.log.now();
        return;
      }
      case 'store-outage': {
        const outage = this.rng.pick(this.cluster.storeOutages);
        const window = this.open(kind, `${outage.label} down for ${hold} ms`, [], undefined);
        await outage.begin();
        await this.sleep(hold, signal);
        await outage.end();
        window.end = this.log.now();
        return;
      }
    }
  }

  /** Every member running and resumed, every link whole, every store back. */
  async healAll(): Promise<void> {
    await this.cluster.firewall?.heal();
    for (const outage of this.cluster.storeOutages) await outage.end();
    for (const member of this.cluster.members) {
      member.process.resume();
      if (!member.process.running) member.process.start();
    }
    await this.allReady();
    const now = this.log.now();
    for (const window of this.windows) window.end ??= now;
  }

  private async restart(id: string): Promise<void> {
    const member = this.cluster.members.find((m) => m.id === id)!;
    if (!member.process.running) member.process.start();
    await this.cluster.waitReady(id);
  }

  /** Waits until every member answers (after the last restarts of a run). */
  private async allReady(): Promise<void> {
    for (const member of this.cluster.members) await this.cluster.waitReady(member.id);
  }

  private open(
    kind: FaultKind,
    describe: string,
    targets: string[],
    leader: string | undefined,
  ): FaultWindow {
    const window: FaultWindow = {
      kind,
      describe,
      targets,
      hitLeader: leader !== undefined && targets.includes(leader),
      start: this.log.now(),
    };
    this.windows.push(window);
    return window;
  }

  private draw([low, high]: [number, number]): number {
    return low + this.rng.int(high - low + 1);
  }

  /** Sleeps, cut short when the run ends (the fault is then healed at once). */
  private async sleep(ms: number, signal: AbortSignal): Promise<void> {
    await this.clock.sleep(ms, signal).catch(() => undefined);
  }
}
