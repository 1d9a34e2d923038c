import test from 'ava';
import { memberCount, nemesisBudget } from './budget.js';
import type { AimedKills } from './durable-kill-faults.js';
import { runNemesis, type Workload } from './run-nemesis.js';

/** Seconds of aimed kills per seed by default: with start, heal and checks, about a minute and a half. */
const CI_SECONDS = 60;
/** How long the kills may go on past the budget while some kind has not landed often enough. */
const EXTRA_SECONDS = 60;

/**
 * Each kind of aimed kill must land inside its window at least once a minute of kills, or the
 * run proved nothing. Once, not more, in the default minute: a kill costs a restart, which
 * takes several seconds on a loaded machine, so a minute holds about two rounds of three kinds.
 */
function minimumLanded(seconds: number): number {
  return Math.max(1, Math.floor(seconds / 60));
}

/**
 * Registers one serial test per seed of the budget (seed 1 by default; NEMESIS_SEED,
 * NEMESIS_SEEDS and NEMESIS_SECONDS as for every nemesis test) running `workload` with only its
 * aimed kills as faults: the run must report no problem (its checks, and every killed member
 * serving again), each kind of kill must have landed inside its window at least once per minute
 * of the budget (the kills go on up to a minute more until it has), and `mustSucceed` must
 * succeed again after the last kill.
 */
export function durableNemesisTests(options: {
  title: string;
  workload: (kills: AimedKills) => Workload;
  kinds: readonly string[];
  mustSucceed: Record<string, string>;
}): void {
  const budget = nemesisBudget([1], CI_SECONDS);
  for (const seed of budget.seeds) {
    test.serial(`${options.title} (seed ${seed})`, async (t) => {
      t.timeout((budget.seconds + 300) * 1000);
      const kills: AimedKills = { tally: {}, problems: [] };
      const needed = minimumLanded(budget.seconds);
      const enough = () => options.kinds.every((k) => (kills.tally[k]?.landed ?? 0) >= needed);
      const outcome = await runNemesis(options.workload(kills), {
        seed,
        seconds: budget.seconds,
        members: memberCount(seed),
        nemesis: { onlyKinds: options.kinds, quietMs: [300, 800] },
        mustSucceed: Object.keys(options.mustSucceed),
        // A loaded machine restarts members slowly: the kills go on until each kind has landed.
        faultsUntil: { enough, extraSeconds: EXTRA_SECONDS },
      });
      t.log(outcome.report);
      t.deepEqual(outcome.problems, [], outcome.report);
      for (const kind of options.kinds)
        t.true(
          (kills.tally[kind]?.landed ?? 0) >= needed,
          `${kind}: ${kills.tally[kind]?.landed ?? 0} kills landed inside the window, ${needed} needed (seed ${seed})\n${outcome.report}`,
        );
      for (const [f, what] of Object.entries(options.mustSucceed))
        t.true((outcome.okAfterHeal[f] ?? 0) > 0, `${what} once the kills stopped`);
    });
  }
}
