import type { Clock } from '@baton/contracts';
import type { NodeId, NodeLiveness } from './model.js';

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

export function checkLivenessOptions(options: NodeLivenessOptions): void {
  if (!(options.suspectAfterMs > options.renewEveryMs)) {
    throw new RangeError(`suspectAfterMs (${options.suspectAfterMs}) must exceed renewEveryMs (${options.renewEveryMs})`);
  }
  if (!(options.deadAfterMs > options.suspectAfterMs)) {
    throw new RangeError(`deadAfterMs (${options.deadAfterMs}) must exceed suspectAfterMs (${options.suspectAfterMs})`);
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
  private startedAt: number;

  constructor(
    private readonly clock: Clock,
    private readonly self: NodeId,
    private readonly options: Pick<NodeLivenessOptions, 'suspectAfterMs' | 'deadAfterMs'>,
  ) {
    checkLivenessOptions({ ...DEFAULT_NODE_LIVENESS_OPTIONS, ...options, renewEveryMs: 0 });
    this.startedAt = clock.now();
  }

  heard(node: NodeId): void {
    this.lastHeard.set(node, this.clock.now());
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
    if (silence >= this.options.deadAfterMs) return 'Dead';
    if (silence >= this.options.suspectAfterMs) return 'Suspect';
    return 'Alive';
  }

  /** Milliseconds since the last renewal seen, or null when none was seen by this tracker. */
  lastHeardMsAgo(node: NodeId): number | null {
    if (node === this.self) return 0;
    const heard = this.lastHeard.get(node);
    return heard === undefined ? null : this.clock.now() - heard;
  }
}
