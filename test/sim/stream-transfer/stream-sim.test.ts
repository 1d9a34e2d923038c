import test from 'ava';
import { LocalMetadataBackend } from './local-backend.js';
import { simSeeds } from './sim-seeds.js';
import { StreamSimulation } from './stream-sim.js';

// The metadata is one fault-injecting fake log here (dropped proposals, lost answers, frozen
// views, leader loss as a flag); stream-raft-sim.test.ts runs the same workload over Raft.
for (const seed of simSeeds([1, 2, 3, 4, 5, 6])) {
  test.serial(`stream transfers under faults keep every invariant (seed ${seed})`, async (t) => {
    const sim = new StreamSimulation({
      seed,
      nodes: 4,
      streams: 6,
      appenders: 8,
      durationMs: 20_000,
      metadata: (_nodes, rng) => new LocalMetadataBackend(rng),
    });
    await sim.run();
    const replay = `SIM_SEED=${seed} npx ava dist/test/sim/stream-transfer/stream-sim.test.js`;
    t.deepEqual(sim.violations, [], `seed ${seed} broke an invariant; replay with: ${replay}`);
    t.log(`seed ${seed}: ${JSON.stringify(sim.summary())}`);
    // The run must have exercised the system, or passing it proves nothing.
    t.true(sim.invariants.entriesChecked > 0, 'no applied entry was checked');
    t.true(sim.stats.acks > 100, `only ${sim.stats.acks} acknowledged appends`);
    t.true(
      sim.stats.transfers > 0 &&
        sim.stats.crashes + sim.stats.partitions + sim.stats.leaderLosses > 0,
    );
  });
}
