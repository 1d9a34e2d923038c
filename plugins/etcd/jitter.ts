import type { Rng } from '@baton/contracts';

/**
 * A delay between half of `ms` and `ms`: members that lost etcd together do not retry in lock
 * step, and no retry comes sooner than half the back-off.
 */
export function jittered(ms: number, rng: Rng): number {
  const half = Math.floor(ms / 2);
  return half + rng.int(ms - half + 1);
}
