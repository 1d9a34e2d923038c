import test from 'ava';
import { memberCount, nemesisBudget } from './budget.js';
import { runNemesis, type Workload } from './run-nemesis.js';

/**
 * Registers one serial test per seed of the budget (CI's `ciSeeds`, 20 s each, or what the
 * environment asks for): the run must report no problem, and each operation named in
 * `mustSucceed` must have ended ok at least once (a run where nothing got through proves nothing),
 * and once again after every fault was healed, within a bounded quiet spell (liveness).
 */
export function nemesisTests(options: {
  title: string;
  workload: () => Workload;
  ciSeeds: readonly number[];
  mustSucceed: Record<string, string>;
  /** Fault kinds every run begins with, so CI's short runs make them (see NemesisOptions). */
  firstKinds?: readonly string[];
}): void {
  const budget = nemesisBudget(options.ciSeeds, 20);
  for (const seed of budget.seeds) {
    test.serial(`${options.title} (seed ${seed})`, async (t) => {
      t.timeout((budget.seconds + 300) * 1000);
      const outcome = await runNemesis(options.workload(), {
        seed,
        seconds: budget.seconds,
        members: memberCount(seed),
        nemesis: { firstKinds: options.firstKinds },
        mustSucceed: Object.keys(options.mustSucceed),
      });
      t.log(outcome.report);
      t.deepEqual(outcome.problems, [], outcome.report);
      // The run also reports a problem when one of them did not succeed again after healing.
      for (const [f, what] of Object.entries(options.mustSucceed))
        t.true((outcome.okAfterHeal[f] ?? 0) > 0, `${what} once the faults were healed`);
    });
  }
}
