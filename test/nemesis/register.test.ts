import test from 'ava';
import { memberCount, nemesisBudget } from './budget.js';
import { registerWorkload } from './register/register-workload.js';
import { runNemesis } from './run-nemesis.js';

const budget = nemesisBudget([1, 2], 20);

for (const seed of budget.seeds) {
  test.serial(
    `consensus: a register on real Raft processes stays linearizable and converges under kill, pause and partitions (seed ${seed})`,
    async (t) => {
      t.timeout((budget.seconds + 300) * 1000);
      const outcome = await runNemesis(registerWorkload(), {
        seed,
        seconds: budget.seconds,
        members: memberCount(seed),
      });
      t.log(outcome.report);
      t.deepEqual(outcome.problems, [], outcome.report);
      t.true(outcome.summary.counts.ok > 0, 'some operations succeeded');
      t.true(
        (outcome.summary.byOperation.get?.ok ?? 0) > 0 &&
          (outcome.summary.byOperation.put?.ok ?? 0) > 0,
        'reads and writes both succeeded',
      );
    },
  );
}
