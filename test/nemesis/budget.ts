/**
 * How much a nemesis test runs: CI's fixed seeds for a short while each, or what the environment
 * asks for.
 * - NEMESIS_SEED=N      one seed (a replay), overriding the list;
 * - NEMESIS_SEEDS=N     N seeds from 1,000 on, after CI's fixed ones;
 * - NEMESIS_SECONDS=S   seconds of faults per seed (CI: `ciSeconds`);
 * - NEMESIS_MEMBERS=3|5 the cluster size (default: drawn from the seed, odd seeds 3, even 5);
 * - NEMESIS_RESULTS=F   appends each run's summary to F as one JSON line (for long runs' figures).
 */
export interface NemesisBudget {
  seeds: number[];
  seconds: number;
}

export function nemesisBudget(ciSeeds: readonly number[], ciSeconds: number): NemesisBudget {
  const seconds = positiveInt('NEMESIS_SECONDS') ?? ciSeconds;
  const one = positiveInt('NEMESIS_SEED');
  if (one !== undefined) return { seeds: [one], seconds };
  const more = positiveInt('NEMESIS_SEEDS') ?? 0;
  return { seeds: [...ciSeeds, ...Array.from({ length: more }, (_, i) => 1000 + i)], seconds };
}

/** 3 or 5 members: NEMESIS_MEMBERS, else odd seeds 3 and even seeds 5, so CI's seeds cover both. */
export function memberCount(seed: number): 3 | 5 {
  const given = positiveInt('NEMESIS_MEMBERS');
  if (given === 3 || given === 5) return given;
  if (given !== undefined) throw new RangeError(`NEMESIS_MEMBERS must be 3 or 5, got ${given}`);
  return seed % 2 === 1 ? 3 : 5;
}

function positiveInt(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return value;
}
