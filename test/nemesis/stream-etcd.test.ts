import test from 'ava';
import { memberCount, nemesisBudget } from './budget.js';
import { runNemesis } from './run-nemesis.js';
import { streamWorkload } from './stream/stream-workload.js';

// One seed in CI (3 stream nodes, 3 etcd members): the Raft variant's seeds cover 5 nodes.
const budget = nemesisBudget([1], 20);

for (const seed of budget.seeds) {
  test.serial(
    `streams on etcd: with the metadata on a real etcd cluster, every acknowledged record is read back once, in order, one node acknowledges per stream at a time and every transfer settles after node and etcd faults (seed ${seed})`,
    async (t) => {
      t.timeout((budget.seconds + 300) * 1000);
      const outcome = await runNemesis(streamWorkload('etcd'), {
        seed,
        seconds: budget.seconds,
        members: memberCount(seed),
      });
      t.log(outcome.report);
      t.deepEqual(outcome.problems, [], outcome.report);
      t.true((outcome.summary.byOperation.append?.ok ?? 0) > 0, 'some appends were acknowledged');
      t.true((outcome.summary.byOperation.transfer?.ok ?? 0) > 0, 'some transfers were accepted');
    },
  );
}
