import test from 'ava';
import { RaftMetadataBackend } from './raft-backend.js';
import { simSeeds } from './sim-seeds.js';
import { StreamSimulation } from './stream-sim.js';

// Three stream nodes, each a voter of one Raft group on the simulated network (drops,
// duplicates, delays from the seed), sharing one object store: producers append while
// transfers, drains and rebalances run, nodes crash and restart from their WAL and Raft
// storage, nodes are partitioned off and leaders isolated. The invariants are the same
// StreamInvariants the fake-log simulation checks, on every replica's applies.
// Serial: one JavaScript thread gains nothing from interleaving runs, and SIM_SEEDS=500 would
// otherwise hold 500 clusters in memory at once.
for (const seed of simSeeds([1, 2, 3, 4])) {
  test.serial(
    `stream transfers over Raft on a faulty network keep every invariant (seed ${seed})`,
    async (t) => {
      const sim = new StreamSimulation({
        seed,
        nodes: 3,
        streams: 6,
        appenders: 6,
        durationMs: 20_000,
        metadata: (nodes, rng) => new RaftMetadataBackend(nodes, seed, rng),
      });
      await sim.run();
      const replay = `SIM_SEED=${seed} npx ava dist/test/sim/stream-transfer/stream-raft-sim.test.js`;
      t.deepEqual(sim.violations, [], `seed ${seed} broke an invariant; replay with: ${replay}`);
      t.log(`seed ${seed}: ${JSON.stringify(sim.summary())}`);
      // The run must have exercised the system, or passing it proves nothing.
      t.true(sim.invariants.entriesChecked > 0, 'no applied entry was checked');
      t.true(sim.stats.acks > 100, `only ${sim.stats.acks} acknowledged appends`);
      t.true(sim.stats.transfers > 0, 'no transfer was proposed');
      t.true(
        sim.stats.crashes + sim.stats.partitions + sim.stats.leaderLosses > 0,
        'no fault was injected',
      );
    },
  );
}
