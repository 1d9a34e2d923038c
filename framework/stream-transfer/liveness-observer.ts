import type { Clock, Timer, Logger, ObjectStore } from '@baton/contracts';
import type { StreamResult } from './commands.js';
import { livenessOf, type NodeId, type NodeLiveness } from './model.js';
import { LEASE_PREFIX, leaseOwner } from './node-lease.js';
import { NodeLivenessTracker, observeEveryMs, type NodeLivenessOptions } from './node-liveness.js';
import type { StreamConsensus } from './stream-node.js';

const RANK: Record<NodeLiveness, number> = { Alive: 0, Suspect: 1, Dead: 2 };
/** Rounds never come closer than this, whatever falls due. */
const MIN_ROUND_MS = 10;

/** What the observer did, for metrics and logs. */
export interface LivenessEvents {
  livenessChanged?(node: NodeId, liveness: NodeLiveness): void;
  failover?(node: NodeId, trigger: 'automatic', result: StreamResult): void;
}

/**
 * The metadata leader's view of node liveness. Only the member that leads the metadata looks:
 * once per round (a renewal period, half of one with the phi detector) it lists the lease renewals (one listing, whatever the number of nodes),
 * feeds a NodeLivenessTracker, and proposes a `node-liveness` command when a node's state
 * differs from the published one, so the consensus carries one command per change, not per
 * renewal. A new leader starts a fresh tracker (everyone Alive until silent long enough) and
 * publishes a node as better off than before only once it saw that node renew.
 *
 * Automatic failover: a node published Dead and still silent `autoFailoverAfterMs` later is
 * failed over by the leader, but only on a store with conditional puts, where the takeover can
 * fence the old owner (see README, "Failover").
 */
export class LivenessObserver {
  private tracker?: NodeLivenessTracker;
  private timer?: Timer;
  private stopped = true;
  /** Lease names seen per node in the last listing: any change is a renewal. */
  private readonly seen = new Map<NodeId, string>();
  private blindSince?: number;
  private readonly proposing = new Set<string>();
  /** Dead nodes whose failover left nothing behind: not proposed again until they return. */
  private readonly failedOver = new Set<NodeId>();
  /** When this leader first judged each node Dead: the phi detector's verdicts come at no fixed silence. */
  private readonly deadSince = new Map<NodeId, number>();

  constructor(
    private readonly deps: {
      self: NodeId;
      consensus: StreamConsensus;
      store: ObjectStore;
      clock: Clock;
      logger: Logger;
      options: NodeLivenessOptions;
      events?: LivenessEvents;
    },
  ) {}

  start(): void {
    this.stopped = false;
    this.tick();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** Milliseconds since `node` last renewed, when this member observes (leads); else null. */
  lastRenewalMsAgo(node: NodeId): number | null {
    return this.tracker?.lastHeardMsAgo(node) ?? null;
  }

  /** Whether this member is the one observing right now. */
  get observing(): boolean {
    return this.tracker !== undefined;
  }

  private tick(): void {
    if (this.stopped) return;
    this.nextVerdictInMs = Infinity;
    void this.round()
      .catch((error) => this.deps.logger.warn({ err: error }, 'liveness round failed'))
      .finally(() => {
        // The next round comes early when a verdict (Dead, or an automatic failover) falls due
        // before it, so a dead node's streams do not wait up to a round more than the thresholds say.
        const wait = Math.max(MIN_ROUND_MS, Math.min(observeEveryMs(this.deps.options), this.nextVerdictInMs));
        if (!this.stopped) this.timer = this.deps.clock.setTimer(wait, () => this.tick());
      });
  }

  /** Milliseconds until the earliest verdict due after this round (set by `round`). */
  private nextVerdictInMs = Infinity;

  private dueIn(silenceMs: number, thresholdMs: number): void {
    if (silenceMs < thresholdMs) this.nextVerdictInMs = Math.min(this.nextVerdictInMs, thresholdMs - silenceMs);
  }

  private async round(): Promise<void> {
    const { consensus, clock, self, options } = this.deps;
    if (!consensus.leadership().isLeader) {
      this.tracker = undefined;
      this.seen.clear();
      this.failedOver.clear();
      this.deadSince.clear();
      return;
    }
    this.tracker ??= new NodeLivenessTracker(clock, self, options);
    const tracker = this.tracker;
    let leases: Map<NodeId, string>;
    try {
      leases = await this.listLeases();
    } catch (error) {
      this.blindSince ??= clock.now();
      this.deps.logger.warn({ err: (error as Error).message }, 'cannot list lease renewals; liveness not judged');
      return;
    }
    if (this.blindSince !== undefined) {
      // Silence that could not be observed is no evidence: count afresh.
      if (clock.now() - this.blindSince >= options.suspectAfterMs) tracker.restart();
      this.blindSince = undefined;
    }
    for (const [node, names] of leases) {
      if (this.seen.get(node) !== names) tracker.heard(node);
      this.seen.set(node, names);
    }
    if (this.tracker !== tracker || !consensus.leadership().isLeader) return;
    const state = consensus.view().state;
    for (const record of state.nodes()) {
      tracker.introduce(record.id);
      const published = livenessOf(record);
      const observed = tracker.state(record.id);
      if (published !== 'Dead') this.failedOver.delete(record.id);
      if (observed !== 'Dead') this.deadSince.delete(record.id);
      else if (!this.deadSince.has(record.id)) this.deadSince.set(record.id, clock.now());
      if (record.id !== self) this.scheduleVerdict(record.id, observed);
      if (observed !== published) {
        const better = RANK[observed] < RANK[published];
        const evidence = record.id === self || tracker.heardSinceStart(record.id);
        if (!better || evidence) this.publish(record.id, observed);
        continue;
      }
      if (published === 'Dead' && this.autoFailoverDue(record.id)) this.failover(record.id);
    }
  }

  private autoFailoverDue(node: NodeId): boolean {
    const { options, store } = this.deps;
    if (options.autoFailoverAfterMs === null || !store.supports.conditionalPut) return false;
    if (this.failedOver.has(node) || node === this.deps.self) return false;
    return this.deadForMs(node) >= options.autoFailoverAfterMs;
  }

  /**
   * How long `node` has been Dead by this leader's count. With fixed thresholds that is the
   * silence past `deadAfterMs`, exact whatever the rounds; with phi, since the round that judged it.
   */
  private deadForMs(node: NodeId): number {
    const { options, clock } = this.deps;
    if (options.detector?.kind !== 'phi') return this.tracker!.silenceMs(node) - options.deadAfterMs;
    const since = this.deadSince.get(node);
    return since === undefined ? -Infinity : clock.now() - since;
  }

  /** Brings the next round forward to when this node's next verdict falls due, where that is known. */
  private scheduleVerdict(node: NodeId, observed: NodeLiveness): void {
    const { options } = this.deps;
    const auto = options.autoFailoverAfterMs ?? Infinity;
    if (observed === 'Dead') this.dueIn(this.deadForMs(node), auto);
    else this.dueIn(this.tracker!.silenceMs(node), options.deadAfterMs);
  }

  private async listLeases(): Promise<Map<NodeId, string>> {
    const names = new Map<NodeId, string[]>();
    let startAfter: string | undefined;
    for (;;) {
      const page = await this.deps.store.list(LEASE_PREFIX, { startAfter, limit: 1000 });
      for (const object of page.objects) {
        const node = leaseOwner(object.key);
        if (!node) continue;
        const list = names.get(node) ?? [];
        list.push(object.key);
        names.set(node, list);
      }
      if (!page.next || page.objects.length === 0) break;
      startAfter = page.next;
    }
    return new Map([...names].map(([node, keys]) => [node, keys.join('|')]));
  }

  private publish(node: NodeId, liveness: NodeLiveness): void {
    this.propose(`liveness:${node}`, { type: 'node-liveness', node, liveness, evidence: this.evidence(node), at: this.at() }, (result) => {
      if (result.ok && !result.duplicate) {
        this.deps.logger.warn({ node, liveness }, 'node liveness changed');
        this.deps.events?.livenessChanged?.(node, liveness);
      }
    });
  }

  private failover(node: NodeId): void {
    this.propose(`failover:${node}`, { type: 'failover', node, evidence: this.evidence(node), at: this.at() }, (result) => {
      this.deps.events?.failover?.(node, 'automatic', result);
      if (!result.ok) return;
      this.deps.logger.warn({ node, moved: result.moved, remaining: result.remaining }, 'dead node failed over automatically');
      if ((result.remaining ?? 0) === 0) this.failedOver.add(node);
    });
  }

  /** What a verdict rests on: the node's silence against the thresholds, as this leader measured it. */
  private evidence(node: NodeId): string {
    const { options } = this.deps;
    const silence = this.tracker?.silenceMs(node);
    const heard = silence === undefined || !Number.isFinite(silence) ? 'never heard from since this leader started' : `silent for ${Math.round(silence)} ms`;
    const failover = options.autoFailoverAfterMs === null ? 'automatic failover off' : `automatic failover ${options.autoFailoverAfterMs} ms after Dead`;
    const detector = options.detector;
    const phi = this.tracker?.phi(node);
    const dead =
      detector?.kind === 'phi'
        ? `Dead at phi ${detector.threshold} after at least ${detector.minDeadAfterMs} ms or after ${options.deadAfterMs} ms${phi === undefined ? '' : `, phi ${phi.toFixed(1)}`}`
        : `Dead after ${options.deadAfterMs} ms`;
    return `${node} ${heard} (Suspect after ${options.suspectAfterMs} ms, ${dead}, ${failover}); observed by ${this.deps.self}`;
  }

  private at(): number {
    return Math.max(0, Math.floor(this.deps.clock.now()));
  }

  /** One proposal per purpose at a time; a failure is retried by a later round. */
  private propose(
    purpose: string,
    command: Parameters<StreamConsensus['propose']>[0],
    settled: (result: StreamResult) => void,
  ): void {
    if (this.proposing.has(purpose)) return;
    this.proposing.add(purpose);
    this.deps.consensus
      .propose(command)
      .then((receipt) => settled(receipt.result))
      .catch((error) => this.deps.logger.warn({ err: (error as Error).message, purpose }, 'liveness proposal failed'))
      .finally(() => this.proposing.delete(purpose));
  }
}
