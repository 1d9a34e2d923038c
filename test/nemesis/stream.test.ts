import test from 'ava';
import { memberCount, nemesisBudget } from './budget.js';
import { runNemesis } from './run-nemesis.js';
import { streamWorkload } from './stream/stream-workload.js';

const budget = nemesisBudget([1, 2], 20);

for (const seed of budget.seeds) {
  test.serial(
    `streams: on real stream nodes every acknowledged record is read back once, in order, and one node acknowledges per stream at a time and every transfer settles after kill, pause, partitions, store outages, drains and failovers (seed ${seed})`,
    async (t) => {
      t.timeout((budget.seconds + 300) * 1000);
      const outcome = await runNemesis(streamWorkload(), {
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
