import { readFile } from 'node:fs/promises';
import test from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { writeStreamNodeConfigs } from '@baton/cli/internal/local-cluster/stream-node-configs.js';
import { runBaton } from './run-baton.js';
import { startStreamCluster, STREAM_TOKEN, type StreamCluster } from './stream-cluster.js';
import { contractFetch } from '../support/api-contract.js';
import { workDir } from './temp-project.js';

const cwd = process.cwd();

const ZONES = {
  n1: { zone: 'z1', disk: 'ssd' },
  n2: { zone: 'z2', disk: 'hdd' },
  n3: { zone: 'z3', disk: 'hdd' },
};

async function zoned(t: import('ava').ExecutionContext): Promise<StreamCluster> {
  return startStreamCluster(t, ['n1', 'n2', 'n3'], { labels: ZONES });
}

function admin(cluster: StreamCluster, method: string, path: string, body?: unknown) {
  return contractFetch()(`${cluster.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${STREAM_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

test('nodes carry the labels of their config, in the admin API and in baton streams nodes', async (t) => {
  const cluster = await zoned(t);
  const listed = (await (await admin(cluster, 'GET', '/v1/admin/nodes')).json()) as { nodes: { id: string; labels: Record<string, string> }[] };
  t.deepEqual(Object.fromEntries(listed.nodes.map((n) => [n.id, n.labels])), ZONES);
  const run = await runBaton(['streams', 'nodes'], { cwd, env: cluster.env });
  t.is(run.code, ExitCode.Ok, run.stderr);
  t.regex(run.stdout, /LABELS/);
  t.regex(run.stdout, /^n2 .* disk=hdd,zone=z2|^n2 .* zone=z2,disk=hdd/m);
});

test('a placement given at create picks a node that satisfies it, is shown with the stream, and binds its transfers', async (t) => {
  const cluster = await zoned(t);
  const created = await admin(cluster, 'POST', '/v1/admin/streams', { stream: 'billing', placement: { require: { zone: 'z3' } } });
  t.is(created.status, 201);
  t.like(await created.json(), { owner: 'n3' });
  const described = (await (await admin(cluster, 'GET', '/v1/streams/billing')).json()) as Record<string, unknown>;
  t.deepEqual(described.placement, { require: { zone: 'z3' } });

  const moved = await admin(cluster, 'POST', '/v1/admin/transfers', { stream: 'billing', target: 'n1' });
  t.is(moved.status, 409);
  t.like(await moved.json(), { type: 'urn:baton:problem:placement-unsatisfiable', status: 409, unplaceable: ['billing'] });

  const pinned = await admin(cluster, 'POST', '/v1/admin/streams', { stream: 'pinned', node: 'n1', placement: { require: { disk: 'hdd' } } });
  t.is(pinned.status, 409);
  t.like(await pinned.json(), { type: 'urn:baton:problem:placement-unsatisfiable', unplaceable: ['pinned'] });
});

test('a stream\'s placement can be replaced: nothing moves, the answer says whether the owner fits, and later moves respect it', async (t) => {
  const cluster = await zoned(t);
  await admin(cluster, 'POST', '/v1/admin/streams', { stream: 'audit', node: 'n1' });
  const changed = await admin(cluster, 'PATCH', '/v1/admin/streams/audit', { placement: { require: { disk: 'hdd' } } });
  t.is(changed.status, 200);
  t.like(await changed.json(), { stream: 'audit', owner: 'n1', epoch: 1, satisfied: false, placement: { require: { disk: 'hdd' } } });
  t.deepEqual(cluster.consensus.view().state.stream('audit')!.placement, { require: { disk: 'hdd' } });
  // Later moves respect it: z3 only, so n2 is refused and n3 is taken.
  await (await admin(cluster, 'PATCH', '/v1/admin/streams/audit', { placement: { require: { zone: 'z3' } } })).arrayBuffer();
  const refused = await admin(cluster, 'POST', '/v1/admin/transfers', { stream: 'audit', target: 'n2' });
  t.is(refused.status, 409);
  t.like(await refused.json(), { type: 'urn:baton:problem:placement-unsatisfiable', unplaceable: ['audit'] });
  const moved = await admin(cluster, 'POST', '/v1/admin/transfers', { stream: 'audit', target: 'n3' });
  t.is(moved.status, 202);
  await moved.arrayBuffer();
  const cleared = await admin(cluster, 'PATCH', '/v1/admin/streams/audit', { placement: {} });
  t.like(await cleared.json(), { satisfied: true, placement: {} });
  t.is(cluster.consensus.view().state.stream('audit')!.placement, undefined);
});

test('a placement naming a label no node carries, an empty spread label or a bad label answers 400 naming the field', async (t) => {
  const cluster = await zoned(t);
  const cases: [unknown, string][] = [
    [{ require: { rack: 'r1' } }, 'placement.require.rack'],
    [{ prefer: { Zone: 'z1' } }, 'placement.prefer.Zone'],
    [{ spread: { group: 'topic', by: '' } }, 'placement.spread.by'],
    [{ spread: { group: 'topic', by: 'region' } }, 'placement.spread.by'],
    [{ spread: { group: 'topic' } }, 'placement.spread.by'],
    [{ require: { zone: '' } }, 'placement.require.zone'],
    [{ anywhere: true }, 'placement'],
  ];
  for (const [placement, field] of cases) {
    const answer = await admin(cluster, 'POST', '/v1/admin/streams', { stream: 'x', placement });
    t.is(answer.status, 400, JSON.stringify(placement));
    const problem = (await answer.json()) as { invalid_fields: { path: string }[] };
    t.true(problem.invalid_fields.some((f) => f.path === field || f.path.startsWith(`${field}.`) || (field === 'placement' && f.path === 'placement')), `${JSON.stringify(placement)} names ${field}: ${JSON.stringify(problem.invalid_fields)}`);
  }
  const badLabel = await admin(cluster, 'POST', '/v1/admin/nodes', { id: 'n9', address: 'http://127.0.0.1:9', slots: 1, labels: { zone: 'not ok' } });
  t.is(badLabel.status, 400);
  t.true(((await badLabel.json()) as { invalid_fields: { path: string }[] }).invalid_fields.some((f) => f.path === 'labels.zone'));
});

test('baton streams create takes --require, --prefer and --spread, and a spread group goes round the zones', async (t) => {
  const cluster = await zoned(t);
  for (let i = 0; i < 6; i++) {
    const run = await runBaton(['streams', 'create', `orders-${i}`, '--spread', 'orders:zone'], { cwd, env: cluster.env });
    t.is(run.code, ExitCode.Ok, run.stderr);
  }
  const owners = [0, 1, 2, 3, 4, 5].map((i) => cluster.consensus.view().state.stream(`orders-${i}`)!.owner);
  t.deepEqual([...owners].sort(), ['n1', 'n1', 'n2', 'n2', 'n3', 'n3']);
  const preferred = await runBaton(['streams', 'create', 'fast', '--require', 'disk=hdd', '--prefer', 'zone=z3'], { cwd, env: cluster.env });
  t.is(preferred.code, ExitCode.Ok, preferred.stderr);
  t.regex(preferred.stdout, /on n3/);
  const bad = await runBaton(['streams', 'create', 'y', '--spread', 'orders'], { cwd, env: cluster.env });
  t.is(bad.code, ExitCode.Usage);
  t.regex(bad.stderr, /--spread takes group:label/);
});

test('baton up --zones labels the local nodes in turn, and refuses a bad zone or the authority variant', async (t) => {
  const dir = await workDir(t);
  const secret = (c: string) => c.repeat(32);
  const record = { ports: { n1: 1, n2: 2, n3: 3 }, token: 't', peerSecrets: { n1: secret('a'), n2: secret('b'), n3: secret('c') } } as never;
  const configs = await writeStreamNodeConfigs(dir, record, { zones: ['z1', 'z2'] });
  const labels = await Promise.all(configs.map(async (c) => (JSON.parse(await readFile(c.file, 'utf8')) as { node: { labels?: unknown } }).node.labels));
  t.deepEqual(labels, [{ zone: 'z1' }, { zone: 'z2' }, { zone: 'z1' }]);
  const bad = await runBaton(['up', '--zones', 'z1,,z3'], { cwd: dir, env: { BATON_CHECK_ARGS: '1' } });
  t.is(bad.code, ExitCode.Usage);
  t.regex(bad.stderr, /--zones takes label values/);
  const authority = await runBaton(['up', '--variant', 'authority', '--zones', 'z1'], { cwd: dir, env: { BATON_CHECK_ARGS: '1' } });
  t.is(authority.code, ExitCode.Usage);
  const fine = await runBaton(['up', '--zones', 'z1,z2,z3'], { cwd: dir, env: { BATON_CHECK_ARGS: '1' } });
  t.is(fine.code, ExitCode.Ok, fine.stderr);
});
