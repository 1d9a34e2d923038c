import type { ExecutionContext } from 'ava';

/**
 * The seeds an authority simulation runs: 1..N (`SIM_SEEDS`, 8 by default) and the seeds that
 * once found a bug (`regressions`, each kept as a fixed case), or only `SIM_SEED`.
 */
export function authoritySeeds(regressions: readonly number[] = []): number[] {
  if (process.env.SIM_SEED) return [Number(process.env.SIM_SEED)];
  const seeds = Array.from({ length: Number(process.env.SIM_SEEDS ?? 8) }, (_, i) => i + 1);
  return [...seeds, ...regressions.filter((seed) => seed > seeds.length)];
}

/**
 * Runs `runSeed` for every seed and sums what each run counted. The first seed that throws fails
 * the test, naming the command that replays it (`file` is the compiled test under
 * dist/test/sim/authority-transfer/), and no sums are returned.
 */
export async function runSeeds<K extends string>(
  t: ExecutionContext,
  file: string,
  runSeed: (seed: number) => Promise<Record<K, number>>,
  regressions: readonly number[] = [],
): Promise<{ seeds: number; totals: Record<K, number> } | undefined> {
  const seeds = authoritySeeds(regressions);
  const totals: Partial<Record<K, number>> = {};
  for (const seed of seeds) {
    try {
      const outcome = await runSeed(seed);
      for (const name of Object.keys(outcome) as K[])
        totals[name] = (totals[name] ?? 0) + outcome[name];
    } catch (error) {
      t.fail(
        `seed ${seed} failed: ${(error as Error).message}\n` +
          `replay: npx tsc -p . && SIM_SEED=${seed} npx ava dist/test/sim/authority-transfer/${file}`,
      );
      return undefined;
    }
  }
  return { seeds: seeds.length, totals: totals as Record<K, number> };
}
