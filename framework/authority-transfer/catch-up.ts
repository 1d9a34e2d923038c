import type { Clock } from '../contracts/clock.js';
import type { FeedOrigin } from './change-feed.js';
import type { FrontierProbe } from './frontier-probe.js';
import { reprobeDelay, type ReprobeSchedule } from './reprobe-schedule.js';
import type { TransferPlan } from './transfer-plan.js';

export interface CatchUpOptions {
  clock: Clock;
  probe: FrontierProbe;
  /** Whose feed the barrier counts: this member's, in its current incarnation. */
  origin: FeedOrigin;
  probeTimeoutMs: number;
  schedule: ReprobeSchedule;
}

export type CatchUpOutcome = 'ready' | 'abandoned' | 'timed_out';

/**
 * Probes the target until the plan is Ready, the plan is abandoned, or its deadline passes. It
 * runs without the plan lock: a cancel aborts the plan's signal, which ends a probe or a wait
 * between probes at once. A probe never outlives the deadline (its timeout is cut to what is
 * left of the budget), so a timed-out transfer answers on time.
 */
export async function awaitCatchUp(plan: TransferPlan, options: CatchUpOptions): Promise<CatchUpOutcome> {
  const { clock, probe } = options;
  for (let attempt = 0; ; attempt++) {
    if (plan.isAbandoned()) return 'abandoned';
    if (!plan.isAwaitingCatchUp()) return 'ready';
    const remaining = plan.deadline - clock.now();
    if (remaining <= 0) return 'timed_out';
    let reading: number | undefined;
    try {
      reading = await probe.probe(plan.request.target, options.origin, {
        signal: plan.signal,
        timeoutMs: Math.min(options.probeTimeoutMs, remaining),
      });
    } catch {
      // An aborted probe means the plan was abandoned (checked at the top of the loop); any
      // other failure is an unreachable target, which reads as no frontier.
      reading = undefined;
    }
    if (plan.isAbandoned()) return 'abandoned';
    plan.fold(reading, clock.now());
    if (!plan.isAwaitingCatchUp()) return 'ready';
    const wait = Math.min(reprobeDelay(options.schedule, attempt), plan.deadline - clock.now());
    if (wait > 0) {
      try {
        await clock.sleep(wait, plan.signal);
      } catch {
        return 'abandoned';
      }
    }
  }
}
