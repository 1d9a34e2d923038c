import type { Clock } from '@baton/contracts';
import { MAX_APPLIED_WAIT_MS } from './applied-waits.js';
import type { FrontierProbe } from './frontier-probe.js';
import { reprobeDelay, type ReprobeSchedule } from './reprobe-schedule.js';
import type { TransferPlan } from './transfer-plan.js';

export interface CatchUpOptions {
  clock: Clock;
  probe: FrontierProbe;
  probeTimeoutMs: number;
  schedule: ReprobeSchedule;
  /**
   * How long the target may hold a probe's answer until it has applied the barrier (a waiting
   * probe; see ProbeOptions.waitFor). 0 asks for none: every probe answers at once.
   */
  waitMs?: number;
  /** Give up at this time (the plan's deadline, or sooner while a freeze holds). */
  until: number;
}

export type CatchUpOutcome = 'ready' | 'abandoned' | 'timed_out';

/**
 * Probes the target on every source feed of the plan until the plan is Ready on a reading taken
 * since its cursors last changed (see TransferPlan.needsReading), the plan is
 * abandoned, or `until` passes. It runs without the plan lock: a cancel aborts the plan's
 * signal, which ends a probe or a wait between probes at once. A probe never outlives the
 * deadline (its timeout is cut to what is left), so a timed-out transfer answers on time. With
 * `waitMs`, each probe asks the target to answer as soon as it applies the cursor's barrier, so
 * the plan is Ready on the target's apply rather than at the next step of the schedule.
 */
export async function awaitCatchUp(plan: TransferPlan, options: CatchUpOptions): Promise<CatchUpOutcome> {
  const { clock, probe } = options;
  for (let attempt = 0; ; attempt++) {
    if (plan.isAbandoned()) return 'abandoned';
    if (!plan.needsReading()) return 'ready';
    const remaining = options.until - clock.now();
    if (remaining <= 0) return 'timed_out';
    const cursors = plan.cursors;
    const timeoutMs = Math.min(options.probeTimeoutMs, remaining);
    // Half the timeout at most, so the held answer arrives before the probe gives up on it.
    const waitMs = Math.min(options.waitMs ?? 0, MAX_APPLIED_WAIT_MS, Math.floor(timeoutMs / 2));
    const probedAt = clock.now();
    const readings = await Promise.all(
      cursors.map((cursor) =>
        probe
          .probe(plan.request.target, cursor.origin, {
            signal: plan.signal,
            timeoutMs,
            ...(waitMs >= 1 ? { waitFor: { serial: cursor.barrier, waitMs } } : {}),
          })
          // An aborted probe means the plan was abandoned (checked below); any other failure is
          // an unreachable target, which reads as no frontier.
          .catch(() => undefined),
      ),
    );
    if (plan.isAbandoned()) return 'abandoned';
    if (plan.cursors === cursors) plan.fold(readings, clock.now());
    if (!plan.needsReading()) return 'ready';
    // A target that held every answer for the whole wait paced the probes itself: ask again at
    // once, so the next apply is heard when it happens. One that answered early without the
    // serial (or at once: it does not know waiting probes) is re-probed on the schedule.
    const held = waitMs >= 1 && readings.every((r) => r?.waited === true) && clock.now() - probedAt >= waitMs;
    const wait = held ? 0 : Math.min(reprobeDelay(options.schedule, attempt), options.until - clock.now());
    if (wait > 0) {
      try {
        await clock.sleep(wait, plan.signal);
      } catch {
        return 'abandoned';
      }
    }
  }
}
