import test from 'ava';
import { authorityWorkload } from './authority/authority-workload.js';
import { memberCount, nemesisBudget } from './budget.js';
import { runNemesis } from './run-nemesis.js';

const budget = nemesisBudget([1, 2], 20);

for (const seed of budget.seeds) {
  test.serial(
    `authority: on real authority nodes no acknowledged write is lost or finalised under an old epoch, and each committed move is audited once on every member, under kill, pause, partitions and audit store outages (seed ${seed})`,
    async (t) => {
      t.timeout((budget.seconds + 300) * 1000);
      const outcome = await runNemesis(authorityWorkload(), {
        seed,
        seconds: budget.seconds,
        members: memberCount(seed),
      });
      t.log(outcome.report);
      t.deepEqual(outcome.problems, [], outcome.report);
      t.true((outcome.summary.byOperation.write?.ok ?? 0) > 0, 'some writes were acknowledged');
      t.true((outcome.summary.byOperation.transfer?.ok ?? 0) > 0, 'some transfers committed');
    },
  );
}
