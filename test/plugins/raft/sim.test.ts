import test from 'ava';
import { CoreSimulation, type SimReport } from './support/core-sim.js';

// Default: a fixed set of seeds, fast. SIM_SEEDS=N runs N seeds; SIM_SEED=S replays one.
const only = process.env.SIM_SEED;
const count = Number(process.env.SIM_SEEDS ?? 300);
const seeds = only !== undefined ? [Number(only)] : Array.from({ length: count }, (_, i) => i + 1);

test(`raft core keeps the safety properties and recovers after faults (${seeds.length} seeds)`, (t) => {
  const totals = {
    proposals: 0,
    committed: 0,
    lost: 0,
    elections: 0,
    restarts: 0,
    snapshotsSent: 0,
    reads: 0,
    confChanges: 0,
    crashesBeforePersist: 0,
  };
  for (const seed of seeds) {
    const report: SimReport = new CoreSimulation(seed).run();
    t.is(
      report.committed + report.lost,
      report.proposals,
      `seed ${seed}: every proposal is decided`,
    );
    for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += report[k];
  }
  t.log(JSON.stringify(totals));
  // The faults must actually have been exercised, or the run proves nothing.
  t.true(totals.committed > 0, 'proposals were committed');
  if (seeds.length >= 50) {
    for (const k of [
      'lost',
      'restarts',
      'snapshotsSent',
      'reads',
      'confChanges',
      'crashesBeforePersist',
    ] as const) {
      t.true(totals[k] > 0, `the runs exercised ${k}`);
    }
  }
});
