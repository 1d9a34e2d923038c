import type { Clock, Logger, Timer } from '@baton/contracts';
import type { StreamConsensus } from './stream-node.js';

/** How often the leader lets a paced plan start more moves. */
const ROUND_MS = 250;

/**
 * Paces the running plan on the metadata leader: every round it lets the plan start the moves
 * its `movesPerSecond` allows since the last round (one `allow-plan-moves` entry), and `apply`
 * starts them within `maxConcurrent`. A round that comes late does not burst: the plan holds at
 * most a second's worth unused. A new leader starts from the replicated plan, so a leader change
 * loses at most a round of pace. Each round is O(plans): it never looks at streams.
 */
export class PlanPacer {
  private timer?: Timer;
  private stopped = true;
  /** The plan being paced, and up to when its pace has been handed out. */
  private paced?: { plan: string; until: number };

  constructor(private readonly deps: { consensus: StreamConsensus; clock: Clock; logger: Logger }) {}

  start(): void {
    this.stopped = false;
    this.tick();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  private tick(): void {
    if (this.stopped) return;
    void this.round()
      .catch((error) => this.deps.logger.warn({ err: error }, 'plan pacing round failed'))
      .finally(() => {
        if (!this.stopped) this.timer = this.deps.clock.setTimer(ROUND_MS, () => this.tick());
      });
  }

  private async round(): Promise<void> {
    const { consensus, clock } = this.deps;
    const state = consensus.view().state;
    const plan = state.plans.running();
    const pace = plan?.limits.movesPerSecond;
    if (!consensus.leadership().isLeader || !plan || pace === undefined || state.rebalanceQueue?.plan !== plan.id || state.rebalanceWaiting === 0) {
      this.paced = undefined;
      return;
    }
    const now = clock.now();
    // The first round of a plan (or of a new leader) hands out one move, then the pace.
    if (this.paced?.plan !== plan.id) this.paced = { plan: plan.id, until: now - 1000 / pace };
    const since = Math.max(this.paced.until, now - 1000);
    const moves = Math.floor(((now - since) * pace) / 1000);
    if (moves < 1) return;
    this.paced.until = since + (moves * 1000) / pace;
    // Stamped with the leader's time: the audit records of the moves it starts carry it.
    const receipt = await consensus.propose({ type: 'allow-plan-moves', plan: plan.id, moves: Math.min(moves, 1000), at: Math.floor(now) });
    if (!receipt.result.ok) this.deps.logger.debug({ plan: plan.id, result: receipt.result }, 'plan pacing refused');
  }
}
