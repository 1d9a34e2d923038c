import type { Clock, Logger, MetadataConsensus } from '@baton/contracts';
import { consensusFactsOf } from '@baton/http';

/** Why a member is not ready, as a stable code a probe or script can switch on. */
export type NotReadyReason = 'no_leader' | 'catching_up' | 'stopped';

export type ReadinessVerdict = { ready: true } | { ready: false; reason: NotReadyReason; detail: string };

/** What /readyz asks. */
export interface Readiness {
  check(): ReadinessVerdict;
}

export interface ConsensusReadinessOptions {
  /** How long one catch-up read may take before it is tried again. */
  readTimeoutMs: number;
  /** Pause between failed catch-up reads. */
  retryMs: number;
}

const DEFAULTS: ConsensusReadinessOptions = { readTimeoutMs: 2_000, retryMs: 250 };

/**
 * A member is ready when it knows a leader now and has applied everything that was committed
 * when it started. The second half is learnt once, by the first linearizable read that
 * succeeds after start: such a read resolves only after this member applied every entry
 * committed before it was issued, whichever consensus implementation serves it. Losing the
 * leader later (cut off from a quorum, an election) makes the member unready again at once.
 */
export class ConsensusReadiness implements Readiness {
  private readonly options: ConsensusReadinessOptions;
  private caughtUpAt?: number;
  private running?: AbortController;
  private stopped = false;

  constructor(
    private readonly consensus: MetadataConsensus<unknown, unknown, unknown>,
    private readonly clock: Clock,
    private readonly logger?: Logger,
    options: Partial<ConsensusReadinessOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  /** Starts the catch-up read (retried until one succeeds or the member stops). */
  start(): void {
    if (this.running || this.stopped) return;
    this.running = new AbortController();
    void this.catchUp(this.running.signal);
  }

  stop(): void {
    this.stopped = true;
    this.running?.abort();
  }

  /** The applied index the catch-up read returned, once it did. */
  get caughtUpIndex(): number | undefined {
    return this.caughtUpAt;
  }

  check(): ReadinessVerdict {
    if (this.stopped) return { ready: false, reason: 'stopped', detail: 'this member is stopping' };
    const facts = consensusFactsOf(this.consensus);
    if (facts.leader === null) {
      return {
        ready: false,
        reason: 'no_leader',
        detail: `this member knows no leader in term ${facts.term}: it is cut off from a quorum of voters, or an election is under way`,
      };
    }
    if (this.caughtUpAt === undefined) {
      return {
        ready: false,
        reason: 'catching_up',
        detail: `this member has not yet applied what was committed when it started (applied through ${facts.appliedIndex})`,
      };
    }
    return { ready: true };
  }

  private async catchUp(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const view = await this.consensus.read({ signal, timeoutMs: this.options.readTimeoutMs });
        this.caughtUpAt = view.applied.index;
        this.logger?.info({ applied: view.applied.index }, 'caught up with what was committed at start: ready once a leader is known');
        return;
      } catch {
        // No leader or no quorum yet: the verdict already says so; try again shortly.
        await this.clock.sleep(this.options.retryMs, signal).catch(() => undefined);
      }
    }
  }
}

/** A member with no consensus of its own (mode dc) is ready once it serves. */
export const servingReadiness: Readiness = { check: () => ({ ready: true }) };
