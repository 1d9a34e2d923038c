import type { Clock, Logger } from '@baton/contracts';
import { PeriodicRound } from './periodic-round.js';
import { allowanceCap } from './plan-record.js';
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
  private readonly rounds: PeriodicRound;
  /** The plan being paced, and up to when its pace has been handed out. */
  private paced?: { plan: string; until: number };

  constructor(private readonly deps: { consensus: StreamConsensus; clock: Clock; logger: Logger }) {
    this.rounds = new PeriodicRound({ clock: deps.clock, logger: deps.logger, everyMs: ROUND_MS, what: 'plan pacing round' }, () => this.round());
  }

  start(): void {
    this.rounds.start();
  }

  stop(): void {
    this.rounds.stop();
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
    // Time not used is not saved up past a second, or past one move's interval at paces below one a second.
    const since = Math.max(this.paced.until, now - Math.max(1000, 1000 / pace));
    const moves = Math.floor(((now - since) * pace) / 1000);
    if (moves < 1) return;
    // An allowance already full (the plan waits on maxConcurrent) needs no entry: the log stays quiet.
    if ((state.rebalanceQueue.talliesNow().allowance ?? 0) >= allowanceCap(pace)) {
      this.paced.until = now;
      return;
    }
    this.paced.until = since + (moves * 1000) / pace;
    // Stamped with the leader's time: the audit records of the moves it starts carry it.
    const receipt = await consensus.propose({ type: 'allow-plan-moves', plan: plan.id, moves: Math.min(moves, 1000), at: Math.floor(now) });
    if (!receipt.result.ok) this.deps.logger.debug({ plan: plan.id, result: receipt.result }, 'plan pacing refused');
  }
}
