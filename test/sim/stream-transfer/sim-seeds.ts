/**
 * The seeds a simulation file runs: `fixed` in CI; `SIM_SEEDS=N` adds N more (from 1,000 on);
 * `SIM_SEED=S` replays only S.
 */
export function simSeeds(fixed: readonly number[]): number[] {
  if (process.env.SIM_SEED) return [Number(process.env.SIM_SEED)];
  const extra = Number(process.env.SIM_SEEDS ?? 0);
  return [...fixed, ...Array.from({ length: extra }, (_, i) => 1_000 + i)];
}
