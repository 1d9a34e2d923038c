import test from 'ava';
import { StreamSimulation } from './stream-sim.js';

// A fixed set of seeds in CI; SIM_SEEDS=N runs N more, SIM_SEED=S replays one.
const fixed = [1, 2, 3, 4, 5, 6];
const extra = Number(process.env.SIM_SEEDS ?? 0);
const seeds = process.env.SIM_SEED
  ? [Number(process.env.SIM_SEED)]
  : [...fixed, ...Array.from({ length: extra }, (_, i) => 1_000 + i)];

for (const seed of seeds) {
  test(`stream transfers under faults keep every invariant (seed ${seed})`, async (t) => {
    const sim = new StreamSimulation({ seed, nodes: 4, streams: 6, appenders: 8, durationMs: 20_000 });
    await sim.run();
    const replay = `SIM_SEED=${seed} npx ava dist/test/sim/stream-transfer/stream-sim.test.js`;
    t.deepEqual(sim.violations, [], `seed ${seed} broke an invariant; replay with: ${replay}`);
    t.log(`seed ${seed}: ${JSON.stringify(sim.stats)}`);
    // The run must have exercised the system, or passing it proves nothing.
    t.true(sim.stats.acks > 100, `only ${sim.stats.acks} acknowledged appends`);
    t.true(sim.stats.transfers > 0 && sim.stats.crashes + sim.stats.partitions + sim.stats.leaderLosses > 0);
  });
}
