import test from 'ava';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../hosts/eventually.js';
import { prepareMember, type ClusterMember } from './cluster.js';
import type { Workload } from './run-nemesis.js';

/**
 * A workload of one trivial member process (it prints and waits) whose check plants a problem,
 * or none: what a run keeps of a failing run, and that a clean run keeps nothing.
 */
function plantedWorkload(problems: string[]): Workload {
  let member: ClusterMember | undefined;
  return {
    name: 'evidence',
    testFile: 'dist/test/nemesis/run-evidence.test.js',
    async start(ctx) {
      const entryPoint = join(ctx.dir, 'idle-member.mjs');
      await writeFile(
        entryPoint,
        "console.log('idle member serving'); setInterval(() => undefined, 1000);\n",
        { mode: 0o644 },
      );
      member = await prepareMember({
        id: 'm1',
        dir: join(ctx.dir, 'm1'),
        ports: [],
        entryPoint,
        config: {},
      });
      member.process.start();
      const waitReady = () =>
        eventually(
          async () =>
            (await readFile(member!.process.logFile, 'utf8')).includes('idle member serving'),
          'the idle member to print',
          30_000,
        );
      await waitReady();
      return { members: [member], leader: async () => undefined, waitReady, storeOutages: [] };
    },
    clients(ctx, signal) {
      return [
        (async () => {
          while (!signal.aborted) {
            ctx.log.invoke('c0', 'noop', {}).ok(null);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        })(),
      ];
    },
    check: async () => problems,
    stop: async () => member?.process.stop(),
  };
}

// The runs root is read when run-nemesis loads: point it at a scratch directory first.
const root = await mkdtemp(join(tmpdir(), 'nemesis-evidence-'));
process.env.NEMESIS_DIR = root;
process.env.NEMESIS_RESULTS = join(root, 'results.jsonl');
const { runNemesis } = await import('./run-nemesis.js');
test.after.always(() => rm(root, { recursive: true, force: true }));

// Quiet far longer than the run: the schedule makes no fault, the run is about its evidence.
const calm = { quietMs: [60_000, 60_000] as [number, number] };

test('a failing run keeps its history, faults, problems, summary, seed with the replay command and every member log, and prints where', async (t) => {
  t.timeout(120_000);
  const outcome = await runNemesis(plantedWorkload(['a planted problem']), {
    seed: 41,
    seconds: 1,
    members: 1,
    nemesis: calm,
  });
  t.deepEqual(outcome.problems, ['a planted problem']);
  const kept = outcome.keptAt!;
  t.truthy(kept);
  t.true(kept.startsWith(root));
  const replay =
    'NEMESIS_SEED=41 NEMESIS_SECONDS=1 NEMESIS_MEMBERS=1 npx ava dist/test/nemesis/run-evidence.test.js';
  t.true(outcome.report.includes(`replay: ${replay}`));
  t.true(outcome.report.includes(`kept the history`) && outcome.report.includes(kept));
  t.true(outcome.report.includes('a planted problem'));
  const history = JSON.parse(await readFile(join(kept, 'history.json'), 'utf8'));
  t.true(history.length > 0 && history.every((r: { f: string }) => r.f === 'noop'));
  t.deepEqual(JSON.parse(await readFile(join(kept, 'problems.json'), 'utf8')), [
    'a planted problem',
  ]);
  t.deepEqual(JSON.parse(await readFile(join(kept, 'faults.json'), 'utf8')), []);
  t.is(await readFile(join(kept, 'seed.txt'), 'utf8'), `41\nreplay: ${replay}\n`);
  t.true((await readFile(join(kept, 'summary.txt'), 'utf8')).includes('evidence, seed 41'));
  t.true((await readFile(join(kept, 'm1', 'member.log'), 'utf8')).includes('idle member serving'));
});

test('a clean run removes its directory and appends its summary to the results file', async (t) => {
  t.timeout(120_000);
  const outcome = await runNemesis(plantedWorkload([]), {
    seed: 42,
    seconds: 1,
    members: 1,
    nemesis: calm,
  });
  t.deepEqual(outcome.problems, []);
  t.is(outcome.keptAt, undefined);
  t.true(outcome.report.includes('evidence, seed 42, 1 members, 1 s: '));
  t.false((await readdir(root)).some((name) => name.startsWith('evidence-seed42')));
  const results = (await readFile(join(root, 'results.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  const mine = results.find((r) => r.seed === 42);
  t.like(mine, { workload: 'evidence', members: 1, seconds: 1, problems: 0 });
  t.is(mine.counts.ops, mine.counts.ok);
});

test('faults go on past the seconds of a run until the test has the ones it needs, and the report says so', async (t) => {
  t.timeout(120_000);
  // Enough at the 61st look (every 20 ms): more than a second past the budget.
  let calls = 0;
  const outcome = await runNemesis(plantedWorkload([]), {
    seed: 43,
    seconds: 1,
    members: 1,
    nemesis: calm,
    faultsUntil: { enough: () => ++calls > 60, extraSeconds: 30 },
  });
  t.deepEqual(outcome.problems, []);
  t.true(calls > 60);
  t.regex(
    outcome.report,
    /faults went on \d+\.\d s past the 1 s, until the test had the faults it needs/,
  );
});
