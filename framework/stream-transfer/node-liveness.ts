import type { Clock } from '@baton/contracts';
import type { NodeId, NodeLiveness } from './model.js';
import { ArrivalWindow, DEFAULT_PHI_ACCRUAL_OPTIONS, phiOf, type PhiAccrualOptions } from './phi-accrual.js';

/**
 * How a silent node is judged Dead. `fixed`: at `deadAfterMs` of silence. `phi`: as soon as its
 * silence is unlikely enough given the gaps between its renewals seen so far (phi-accrual.ts),
 * but never before `minDeadAfterMs` (the lease a node holds relies on that bound) and always by
 * `deadAfterMs`.
 */
export type LivenessDetector = { kind: 'fixed' } | ({ kind: 'phi'; minDeadAfterMs: number } & PhiAccrualOptions);

export interface NodeLivenessOptions {
  /** How often each node renews its lease (writes a renewal object). */
  renewEveryMs: number;
  /** Silence after which a node is Suspect. */
  suspectAfterMs: number;
  /** Silence after which a node is Dead: a failover may then move its streams. */
  deadAfterMs: number;
  /**
   * How long a node stays Dead before the metadata leader fails it over by itself; `null`
   * turns automatic failover off (an operator runs `baton streams failover`).
   */
  autoFailoverAfterMs: number | null;
  /** How Dead is decided; fixed thresholds when absent. */
  detector?: LivenessDetector;
}

/**
 * The shortest silence after which a node can be declared Dead: its lease stops covering
 * acknowledgements before then (node-lease.ts), so no failover can overlap an acknowledged append.
 */
export function earliestDeadMs(options: Pick<NodeLivenessOptions, 'deadAfterMs' | 'detector'>): number {
  return options.detector?.kind === 'phi' ? options.detector.minDeadAfterMs : options.deadAfterMs;
}

/** How often the metadata leader lists renewals: twice a period with phi, so gaps are measured finely. */
export function observeEveryMs(options: Pick<NodeLivenessOptions, 'renewEveryMs' | 'detector'>): number {
  return options.detector?.kind === 'phi' ? Math.max(5, Math.floor(options.renewEveryMs / 2)) : options.renewEveryMs;
}

/**
 * The defaults aim at a dead node's streams serving elsewhere within 5 s: Dead after 3 s of
 * silence (six missed renewals, so one slow disk write or GC pause is not a verdict), then
 * failed over 1 s later. Automatic failover is on because fencing makes a wrong verdict cheap
 * (a paused node that comes back loses its streams, never records) while a stream left on a
 * dead node is unavailable until someone notices.
 */
export const DEFAULT_NODE_LIVENESS_OPTIONS: NodeLivenessOptions = {
  renewEveryMs: 500,
  suspectAfterMs: 1_500,
  deadAfterMs: 3_000,
  autoFailoverAfterMs: 1_000,
};

/**
 * For a failover within about two seconds: renewals every 200 ms, Dead by phi accrual from 900 ms
 * of silence on a quiet cluster (later as renewals arrive less regularly, 3 s at most), failed
 * over at once. A node's lease is then 900 ms, so a node that cannot renew for 700 ms stops
 * acknowledging until it renews again.
 */
export const ADAPTIVE_NODE_LIVENESS_OPTIONS: NodeLivenessOptions = {
  renewEveryMs: 200,
  suspectAfterMs: 600,
  deadAfterMs: 3_000,
  autoFailoverAfterMs: 0,
  detector: { kind: 'phi', minDeadAfterMs: 900, ...DEFAULT_PHI_ACCRUAL_OPTIONS },
};

export function checkLivenessOptions(options: NodeLivenessOptions): void {
  if (!(options.suspectAfterMs > options.renewEveryMs)) {
    throw new RangeError(`suspectAfterMs (${options.suspectAfterMs}) must exceed renewEveryMs (${options.renewEveryMs})`);
  }
  if (!(options.deadAfterMs > options.suspectAfterMs)) {
    throw new RangeError(`deadAfterMs (${options.deadAfterMs}) must exceed suspectAfterMs (${options.suspectAfterMs})`);
  }
  const detector = options.detector;
  if (detector?.kind === 'phi' && !(detector.minDeadAfterMs > options.suspectAfterMs && detector.minDeadAfterMs <= options.deadAfterMs)) {
    throw new RangeError(
      `detector.minDeadAfterMs (${detector.minDeadAfterMs}) must exceed suspectAfterMs (${options.suspectAfterMs}) and be at most deadAfterMs (${options.deadAfterMs})`,
    );
  }
}

/**
 * Alive / Suspect / Dead per node from how long ago its last lease renewal was seen, with the
 * authority variant's MemberTracker semantics: a node never heard from counts from the
 * tracker's start (or from when it was first seen registered, if later), so a fresh observer (a new metadata leader) does not declare anyone dead at
 * once; the observer itself is always Alive.
 */
export class NodeLivenessTracker {
  private readonly lastHeard = new Map<NodeId, number>();
  /** When a node not heard from yet was first seen registered: its silence counts from then. */
  private readonly introduced = new Map<NodeId, number>();
  /** The gaps between each node's renewals as seen, for the phi detector. */
  private readonly gaps = new Map<NodeId, ArrivalWindow>();
  private startedAt: number;

  constructor(
    private readonly clock: Clock,
    private readonly self: NodeId,
    private readonly options: Pick<NodeLivenessOptions, 'suspectAfterMs' | 'deadAfterMs' | 'detector'>,
  ) {
    checkLivenessOptions({ ...DEFAULT_NODE_LIVENESS_OPTIONS, ...options, renewEveryMs: 0 });
    this.startedAt = clock.now();
  }

  heard(node: NodeId): void {
    const now = this.clock.now();
    const detector = this.options.detector;
    const last = this.lastHeard.get(node);
    if (detector?.kind === 'phi' && last !== undefined) {
      let window = this.gaps.get(node);
      if (!window) this.gaps.set(node, (window = new ArrivalWindow(detector.window)));
      window.add(now - last);
    }
    this.lastHeard.set(node, now);
    this.introduced.delete(node);
  }

  /** A node registered after this tracker started is given the same grace as one at the start. */
  introduce(node: NodeId): void {
    if (!this.lastHeard.has(node) && !this.introduced.has(node)) this.introduced.set(node, this.clock.now());
  }

  /** Whether a renewal of `node` was seen since this tracker started (or restarted). */
  heardSinceStart(node: NodeId): boolean {
    return this.lastHeard.has(node);
  }

  /**
   * Starts counting afresh: the observer could not see renewals for a while (its object store
   * reads failed), and silence it could not observe is not evidence against anyone.
   */
  restart(): void {
    this.lastHeard.clear();
    this.introduced.clear();
    this.startedAt = this.clock.now();
  }

  silenceMs(node: NodeId): number {
    if (node === this.self) return 0;
    return this.clock.now() - (this.lastHeard.get(node) ?? this.introduced.get(node) ?? this.startedAt);
  }

  state(node: NodeId): NodeLiveness {
    const silence = this.silenceMs(node);
    if (silence >= this.options.deadAfterMs || this.unlikelySilence(node, silence)) return 'Dead';
    if (silence >= this.options.suspectAfterMs) return 'Suspect';
    return 'Alive';
  }

  /** Phi of the node's current silence, when the phi detector runs and has seen enough gaps. */
  phi(node: NodeId): number | undefined {
    const detector = this.options.detector;
    const window = this.gaps.get(node);
    if (detector?.kind !== 'phi' || !window || node === this.self) return undefined;
    return phiOf(window, this.silenceMs(node), detector);
  }

  private unlikelySilence(node: NodeId, silence: number): boolean {
    const detector = this.options.detector;
    if (detector?.kind !== 'phi' || silence < detector.minDeadAfterMs) return false;
    return (this.phi(node) ?? 0) >= detector.threshold;
  }

  /** Milliseconds since the last renewal seen, or null when none was seen by this tracker. */
  lastHeardMsAgo(node: NodeId): number | null {
    if (node === this.self) return 0;
    const heard = this.lastHeard.get(node);
    return heard === undefined ? null : this.clock.now() - heard;
  }
}
