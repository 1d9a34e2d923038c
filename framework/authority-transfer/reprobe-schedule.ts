/**
 * When to probe the target again: capped exponential backoff with jitter-free steps, so a slow
 * target is not hammered and a quick one is noticed quickly. Bounded twice: by `maxDelayMs`
 * between probes and by the plan's budget overall.
 */
export interface ReprobeSchedule {
  initialDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_REPROBE_SCHEDULE: ReprobeSchedule = { initialDelayMs: 100, maxDelayMs: 2_000 };

export function reprobeDelay(schedule: ReprobeSchedule, attempt: number): number {
  const delay = schedule.initialDelayMs * 2 ** Math.min(attempt, 30);
  return Math.min(schedule.maxDelayMs, delay);
}
