import test from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { runBaton } from './run-baton.js';
import { eventually, startStreamCluster, STREAM_TOKEN } from './stream-cluster.js';
import { contractFetch } from '../support/api-contract.js';

const cwd = process.cwd();

test('baton plan create shows the moves and effect and moves nothing; execute runs it to the end; show and list follow it', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2', 'n3'], { labels: { n1: { zone: 'z1' }, n2: { zone: 'z2' }, n3: { zone: 'z2' } } });
  const state = () => cluster.consensus.view().state;
  for (let i = 0; i < 9; i++) t.is((await runBaton(['streams', 'create', `c${i}`, '--owner', 'n1'], { cwd, env: cluster.env })).code, ExitCode.Ok);

  const created = await runBaton(['plan', 'create', '--goal', 'rebalance', '--max-concurrent', '2', '-o', 'json'], { cwd, env: cluster.env });
  t.is(created.code, ExitCode.Ok, created.stderr);
  const plan = JSON.parse(created.stdout) as { id: string; planned: number; status: string; effect: { byLabel: { value: string; before: number; after: number }[] } };
  t.like(plan, { planned: 6, status: 'planned' });
  t.deepEqual(plan.effect.byLabel.map((l) => [l.value, l.before, l.after]), [['z1', 9, 3], ['z2', 0, 6]]);
  t.is(state().transferCount, 0);

  const human = await runBaton(['plan', 'show', plan.id], { cwd, env: cluster.env });
  t.is(human.code, ExitCode.Ok);
  t.regex(human.stdout, new RegExp(`${plan.id}: rebalance, planned`));
  t.regex(human.stdout, /NODE\s+BEFORE\s+AFTER\s+OUT\s+IN/);
  t.regex(human.stdout, /n1\s+9\s+3\s+6\s+0/);

  const refused = await runBaton(['plan', 'execute', plan.id], { cwd, env: cluster.env });
  t.is(refused.code, ExitCode.Usage, 'no terminal and no --yes: nothing moves');
  t.is(state().transferCount, 0);
  t.is(state().plans.get(plan.id)!.status, 'planned');
  const executed = await runBaton(['plan', 'execute', plan.id, '--yes', '--interval', '20ms'], { cwd, env: cluster.env });
  t.is(executed.code, ExitCode.Ok, executed.stderr);
  t.regex(executed.stdout, new RegExp(`${plan.id}: completed; 6 of 6 moved`));
  t.deepEqual([...state().nodes()].map((n) => state().ownedCount(n.id)), [3, 3, 3]);

  const listed = await runBaton(['plan', 'list'], { cwd, env: cluster.env });
  t.regex(listed.stdout, new RegExp(`${plan.id}\\s+rebalance\\s+completed\\s+6`));
});

test('baton plan set changes the limits and cancel stops a plan; a stale plan and bad input are refused with the reason', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2']);
  for (let i = 0; i < 4; i++) t.is((await runBaton(['streams', 'create', `d${i}`, '--owner', 'n1'], { cwd, env: cluster.env })).code, ExitCode.Ok);
  const id = async (args: string[]) => {
    const run = await runBaton(['plan', 'create', ...args, '-o', 'name'], { cwd, env: cluster.env });
    t.is(run.code, ExitCode.Ok, run.stderr);
    return run.stdout.trim();
  };
  const drain = await id(['--goal', 'drain', '--nodes', 'n1', '--moves-per-second', '2']);
  const set = await runBaton(['plan', 'set', drain, '--max-concurrent', '3', '--no-pace'], { cwd, env: cluster.env });
  t.is(set.code, ExitCode.Ok, set.stderr);
  t.regex(set.stdout, new RegExp(`${drain}: 3 at once \\(planned\\)`));
  const cancelled = await runBaton(['plan', 'cancel', drain], { cwd, env: cluster.env });
  t.is(cancelled.code, ExitCode.Ok);
  t.regex(cancelled.stdout, /cancelled/);
  const again = await runBaton(['plan', 'execute', drain, '--yes'], { cwd, env: cluster.env });
  t.is(again.code, ExitCode.Failed);
  t.regex(again.stderr, /cancelled/);

  const stale = await id(['--goal', 'rebalance']);
  t.is((await runBaton(['streams', 'create', 'late', '--owner', 'n1'], { cwd, env: cluster.env })).code, ExitCode.Ok);
  const refused = await runBaton(['plan', 'execute', stale, '--yes'], { cwd, env: cluster.env });
  t.is(refused.code, ExitCode.Failed);
  t.regex(refused.stderr, /412.*create the plan again/);
  t.is(cluster.consensus.view().state.transferCount, 0);

  const badGoal = await runBaton(['plan', 'create', '--goal', 'shuffle'], { cwd, env: cluster.env });
  t.is(badGoal.code, ExitCode.Usage);
  const noNodes = await runBaton(['plan', 'create', '--goal', 'drain'], { cwd, env: cluster.env });
  t.is(noNodes.code, ExitCode.Failed);
  t.regex(noNodes.stderr, /400.*nodes/);
  const zero = await runBaton(['plan', 'set', stale, '--max-concurrent', '0'], { cwd, env: cluster.env });
  t.is(zero.code, ExitCode.Usage);
  const unknown = await runBaton(['plan', 'show', 'plan-99999'], { cwd, env: cluster.env });
  t.is(unknown.code, ExitCode.Failed);
  t.regex(unknown.stderr, /404/);
  await eventually(() => cluster.consensus.view().state.transferCount === 0, 'nothing in flight');
});

test('POST and PATCH /v1/admin/plans answer 400 naming the field for an unknown goal, nodes that do not go with the goal, and limits of 0 or absurd', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2']);
  const send = async (method: string, path: string, body: unknown) => {
    const response = await contractFetch()(`${cluster.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${STREAM_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as { invalid_fields?: { path: string }[]; id?: string } };
  };
  const cases: [unknown, string][] = [
    [{ goal: 'shuffle' }, 'goal'],
    [{}, 'goal'],
    [{ goal: 'drain' }, 'nodes'],
    [{ goal: 'drain', nodes: [] }, 'nodes'],
    [{ goal: 'rebalance', nodes: ['n1'] }, 'nodes'],
    [{ goal: { type: 'drain', nodes: ['bad id!'] } }, 'goal'],
    [{ goal: 'rebalance', limits: { maxConcurrent: 0 } }, 'limits.maxConcurrent'],
    [{ goal: 'rebalance', limits: { maxConcurrent: 1e9 } }, 'limits.maxConcurrent'],
    [{ goal: 'rebalance', limits: { movesPerSecond: 0 } }, 'limits.movesPerSecond'],
    [{ goal: 'rebalance', limits: { movesPerSecond: 5_000 } }, 'limits.movesPerSecond'],
    [{ goal: 'rebalance', limits: { pace: 1 } }, 'limits'],
  ];
  for (const [body, field] of cases) {
    const answer = await send('POST', '/v1/admin/plans', body);
    t.is(answer.status, 400, JSON.stringify(body));
    t.true(answer.body.invalid_fields?.some((f) => f.path === field || f.path.startsWith(`${field}.`)), `${JSON.stringify(body)} names ${field}: ${JSON.stringify(answer.body.invalid_fields)}`);
  }
  const { body: plan } = await send('POST', '/v1/admin/plans', { goal: 'rebalance' });
  for (const [body, field] of [
    [{}, ''],
    [{ maxConcurrent: 0 }, 'maxConcurrent'],
    [{ movesPerSecond: -1 }, 'movesPerSecond'],
  ] as [unknown, string][]) {
    const answer = await send('PATCH', `/v1/admin/plans/${plan.id}`, body);
    t.is(answer.status, 400, JSON.stringify(body));
    t.true(answer.body.invalid_fields?.some((f) => f.path === field), `${JSON.stringify(body)} names ${JSON.stringify(field)}: ${JSON.stringify(answer.body.invalid_fields)}`);
  }
  t.is(cluster.consensus.view().state.plans.list().length, 1, 'no refused request made a plan');
});
