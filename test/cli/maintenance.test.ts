import test from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { runBaton } from './run-baton.js';
import { eventually, startStreamCluster, STREAM_TOKEN, type StreamCluster } from './stream-cluster.js';
import { contractFetch } from '../support/api-contract.js';

const cwd = process.cwd();

function admin(cluster: StreamCluster, method: string, path: string, body?: unknown) {
  return contractFetch()(`${cluster.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${STREAM_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const later = (ms: number) => new Date(Date.now() + ms).toISOString(); // clock-ok: a time for the API to parse

test('a window drains its node at once, keeps new streams off it, refuses a second past the budget, and hands streams back after it ends', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2', 'n3']);
  for (let i = 0; i < 6; i++) await (await admin(cluster, 'POST', '/v1/admin/streams', { stream: `m${i}`, node: i < 3 ? 'n1' : 'n2' })).arrayBuffer();
  const state = () => cluster.consensus.view().state;

  const scheduled = await admin(cluster, 'POST', '/v1/admin/nodes/n1/maintenance', { duration: '3s', movesPerSecond: 50 });
  t.is(scheduled.status, 201);
  const { node } = (await scheduled.json()) as { node: { id: string; maintenance: { start: string; end: string; active: boolean; movesPerSecond: number } } };
  t.like(node, { id: 'n1', maintenance: { movesPerSecond: 50 } });
  t.is(Date.parse(node.maintenance.end) - Date.parse(node.maintenance.start), 3_000);

  await eventually(() => state().node('n1')!.draining && state().ownedCount('n1') === 0 && state().transferCount === 0, 'n1 to give every stream away');
  const refused = await admin(cluster, 'POST', '/v1/admin/streams', { stream: 'new', node: 'n1' });
  t.is(refused.status, 409, 'no new stream on a node in maintenance');
  await refused.arrayBuffer();
  const second = await admin(cluster, 'POST', '/v1/admin/nodes/n2/maintenance', { duration: '1h' });
  t.is(second.status, 409);
  t.like(await second.json(), { type: 'urn:baton:problem:maintenance-budget', status: 409 });

  // The window ends by itself; streams come back until the nodes are even, then the mark is cleared.
  await eventually(() => !state().node('n1')!.draining, 'the window to end', 15_000);
  await eventually(() => state().node('n1')!.returning === undefined && state().transferCount === 0, 'the hand-back to finish', 15_000);
  t.is(state().ownedCount('n1'), 2);
  const listed = (await (await admin(cluster, 'GET', '/v1/admin/nodes/n1')).json()) as { maintenance: unknown; returning: boolean };
  t.like(listed, { maintenance: null, returning: false });
});

test('a window in the past, a zero or absurd duration or pace, or a malformed start answers 400 naming the field; DELETE ends a window', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2']);
  const cases: [unknown, string][] = [
    [{ duration: 0 }, 'duration'],
    [{ duration: '0s' }, 'duration'],
    [{ duration: '400d' }, 'duration'],
    [{ duration: 'soon' }, 'duration'],
    [{ duration: '1h', start: '2020-01-01T00:00:00Z' }, 'start'],
    [{ duration: '1h', start: 'tomorrow' }, 'start'],
    [{ duration: '1h', movesPerSecond: 0 }, 'movesPerSecond'],
    [{ duration: '1h', movesPerSecond: 5_000 }, 'movesPerSecond'],
    [{ duration: '1h', window: 'x' }, ''],
    [{}, 'duration'],
  ];
  for (const [body, field] of cases) {
    const answer = await admin(cluster, 'POST', '/v1/admin/nodes/n1/maintenance', body);
    t.is(answer.status, 400, JSON.stringify(body));
    const problem = (await answer.json()) as { invalid_fields: { path: string }[] };
    t.true(problem.invalid_fields.some((f) => f.path === field || f.path.startsWith(field)), `${JSON.stringify(body)} names ${field}: ${JSON.stringify(problem.invalid_fields)}`);
  }
  t.is((await admin(cluster, 'POST', '/v1/admin/nodes/n9/maintenance', { duration: '1h' })).status, 404);
  t.is((await admin(cluster, 'DELETE', '/v1/admin/nodes/n1/maintenance')).status, 404, 'no window to end');

  const future = await admin(cluster, 'POST', '/v1/admin/nodes/n1/maintenance', { duration: '1h', start: later(3_600_000) });
  t.is(future.status, 201);
  t.like(await future.json(), { node: { maintenance: { active: false } } });
  t.false(cluster.consensus.view().state.node('n1')!.draining, 'not drained before its start');
  const ended = await admin(cluster, 'DELETE', '/v1/admin/nodes/n1/maintenance');
  t.is(ended.status, 200);
  t.like(await ended.json(), { node: { id: 'n1', maintenance: null, draining: false } });
});

test('baton node maintenance NODE --for schedules a window and --end ends it; without --for it is a usage error', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2']);
  const start = later(3_600_000);
  const run = await runBaton(['node', 'maintenance', 'n2', '--for', '2h', '--start', start, '--moves-per-second', '5'], { cwd, env: cluster.env });
  t.is(run.code, ExitCode.Ok, run.stderr);
  t.regex(run.stdout, /^n2: in maintenance from \S+ to \S+\n$/);
  t.like(cluster.consensus.view().state.node('n2')!.maintenance, { movesPerSecond: 5, endAt: Date.parse(start) + 2 * 3_600_000 });
  const ended = await runBaton(['node', 'maintenance', 'n2', '--end'], { cwd, env: cluster.env });
  t.is(ended.code, ExitCode.Ok, ended.stderr);
  t.is(cluster.consensus.view().state.node('n2')!.maintenance, undefined);
  const bare = await runBaton(['node', 'maintenance', 'n2'], { cwd, env: cluster.env });
  t.is(bare.code, ExitCode.Usage);
  t.regex(bare.stderr, /--for/);
});
