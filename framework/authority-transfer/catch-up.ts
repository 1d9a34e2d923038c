import type { Clock } from '../contracts/clock.js';
import type { FrontierProbe } from './frontier-probe.js';
import { reprobeDelay, type ReprobeSchedule } from './reprobe-schedule.js';
import type { TransferPlan } from './transfer-plan.js';

export interface CatchUpOptions {
  clock: Clock;
  probe: FrontierProbe;
  probeTimeoutMs: number;
  schedule: ReprobeSchedule;
  /** Give up at this time (the plan's deadline, or sooner while a freeze holds). */
  until: number;
}

export type CatchUpOutcome = 'ready' | 'abandoned' | 'timed_out';

/**
 * Probes the target on every source feed of the plan until the plan is Ready on a reading taken
 * since its cursors last changed (see TransferPlan.needsReading), the plan is
 * abandoned, or `until` passes. It runs without the plan lock: a cancel aborts the plan's
 * signal, which ends a probe or a wait between probes at once. A probe never outlives the
 * deadline (its timeout is cut to what is left), so a timed-out transfer answers on time.
 */
export async function awaitCatchUp(plan: TransferPlan, options: CatchUpOptions): Promise<CatchUpOutcome> {
  const { clock, probe } = options;
  for (let attempt = 0; ; attempt++) {
    if (plan.isAbandoned()) return 'abandoned';
    if (!plan.needsReading()) return 'ready';
    const remaining = options.until - clock.now();
    if (remaining <= 0) return 'timed_out';
    const cursors = plan.cursors;
    const readings = await Promise.all(
      cursors.map((cursor) =>
        probe
          .probe(plan.request.target, cursor.origin, { signal: plan.signal, timeoutMs: Math.min(options.probeTimeoutMs, remaining) })
          // An aborted probe means the plan was abandoned (checked below); any other failure is
          // an unreachable target, which reads as no frontier.
          .catch(() => undefined),
      ),
    );
    if (plan.isAbandoned()) return 'abandoned';
    if (plan.cursors === cursors) plan.fold(readings, clock.now());
    if (!plan.needsReading()) return 'ready';
    const wait = Math.min(reprobeDelay(options.schedule, attempt), options.until - clock.now());
    if (wait > 0) {
      try {
        await clock.sleep(wait, plan.signal);
      } catch {
        return 'abandoned';
      }
    }
  }
}
