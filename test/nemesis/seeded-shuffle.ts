import type { SeededRng } from '@baton/conformance/internal/seeded-rng.js';

/** A copy of `items` in an order drawn from the seed (Fisher-Yates). */
export function shuffle<T>(rng: SeededRng, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
