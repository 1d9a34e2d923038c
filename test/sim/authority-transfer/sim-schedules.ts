import type { SeededRng } from '@baton/conformance/internal/seeded-rng.js';

/**
 * A simulated request's schedule: one in five starts up to 3 s ahead, half of those with an end
 * 2-12 s after their start (so some give up before the target catches up), none otherwise. A
 * scheduled request holds the authority while it waits, and any member may cancel it meanwhile.
 */
export function scheduleOf(rng: SeededRng, now: number): { notBefore?: number; notAfter?: number } {
  if (!rng.chance(0.2)) return {};
  const notBefore = now + 1 + rng.int(3_000);
  return rng.chance(0.5) ? { notBefore, notAfter: notBefore + 2_000 + rng.int(10_000) } : { notBefore };
}
