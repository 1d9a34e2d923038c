import test from 'ava';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import { OBJECT_STORE } from '@baton/contracts/internal/object-store.js';
import { METRICS, type BatonMetrics } from '@baton/http/internal/metrics.js';
import { assertRoutesDocumented, routedOperations, undocumentedResponses, type AnsweredRequest } from '@baton/http/internal/openapi-coverage.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { streamApiRouters } from '@baton/stream-transfer/internal/api.js';
import { StreamClient } from '@baton/client';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { STREAM_NODE } from '@baton/stream-transfer/internal/plugins.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { sharedConsensus } from '@baton/testing/internal/fakes/shared-consensus.js';
import { streamNodeHostBuilder } from '@baton/host-stream-node/internal/host.js';
import { RAFT_PEER_OPERATIONS, RAFT_PEER_ROUTER } from '@baton/plugin-raft/internal/transport-http.js';
import { documentGaps } from '../../support/openapi-completeness.js';
import { contractFetch } from '../../support/api-contract.js';

const TOKEN = 'doc-admin';
const READER = 'doc-reader';

function config(self: string) {
  return {
    node: {
      self,
      http: { port: 0 },
      wal: { kind: 'memory' },
      // n3 is registered and never renews its lease: it must stay Alive however slow the run
      // (its failover is refused as a live node's, then forced), never failed over on its own.
      liveness: { suspectAfterMs: 600_000, deadAfterMs: 1_200_000, autoFailoverAfterMs: null },
      tokens: [
        { token: TOKEN, principal: 'ops', scopes: ['admin', 'stream:append', 'stream:read'] },
        { token: READER, principal: 'reader', scopes: ['read'] },
      ],
    },
    dataDir: null,
    objectStore: { use: 'memory-object-store' },
    log: { level: 'silent' },
  };
}

async function eventually(condition: () => Promise<boolean> | boolean, what: string, ms = 10_000): Promise<void> {
  const clock = new SystemClock();
  const deadline = clock.now() + ms;
  while (!(await condition())) {
    if (clock.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await clock.sleep(10);
  }
}

/** The answers a host gave, by route template and status, read back from its request histogram. */
async function answered(metrics: BatonMetrics): Promise<AnsweredRequest[]> {
  const histogram = await metrics.httpRequestDuration.get();
  return histogram.values
    .filter((v) => v.metricName === 'baton_http_request_duration_seconds_count' && v.labels.route !== 'unmatched')
    .map((v) => ({ method: String(v.labels.method), path: String(v.labels.route), status: Number(v.labels.status) }));
}

/** The value of the sample `name` whose labels include `labels` (in any order), if exposed. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = new Map([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => present.get(k) === v)) return Number(match[3]);
  }
  return undefined;
}

/** Two hosts on one metadata consensus, so a transfer can happen between them. */
async function twoNodes(t: import('ava').ExecutionContext) {
  const inner = new LocalConsensus<StreamMetadata, StreamCommand, StreamResult>(new StreamStateMachine());
  const shared = sharedConsensus(inner);
  const first = streamNodeHostBuilder(config('n1')).value(METADATA_CONSENSUS, shared).build();
  await first.start();
  const second = streamNodeHostBuilder(config('n2')).value(METADATA_CONSENSUS, shared).value(OBJECT_STORE, first.get(OBJECT_STORE)).build();
  await second.start();
  t.teardown(async () => {
    await second.stop();
    await first.stop();
  });
  return { first, second, n1: first.get(STREAM_NODE), n2: second.get(STREAM_NODE) };
}

test('every route the stream listener serves is in the OpenAPI document, and nothing else is', async (t) => {
  const { first } = await twoNodes(t);
  const node = first.get(STREAM_NODE);
  // The listener also carries Raft peer traffic: member-to-member, documented as internal.
  const { routers, document } = streamApiRouters(node.node, { metrics: first.get(METRICS), extraOperations: RAFT_PEER_OPERATIONS });
  t.notThrows(() => assertRoutesDocumented([...routers, first.get(RAFT_PEER_ROUTER)], document));
  t.true(document.has('get', '/metrics') && document.has('get', '/openapi.json'));
  const peer = routedOperations(first.get(RAFT_PEER_ROUTER)).operations;
  t.true(peer.length > 0 && peer.every((op) => op.includes('/internal/raft/')), peer.join(', '));
  // The served document is the same one.
  const served = (await (await fetch(`${node.url}/openapi.json`)).json()) as { openapi: string; paths: Record<string, any>; components: any };
  t.is(served.openapi, '3.1.0');
  t.deepEqual(Object.keys(served.paths).sort(), Object.keys(document.toJSON().paths as object).sort());
  // Complete enough to generate a client from: ids, tags, security, schemas, examples, one Problem.
  t.deepEqual(documentGaps(served), []);
  t.like(served.components.schemas.Problem.properties, { owner: { type: 'string' }, epoch: { type: 'integer' }, invalid_fields: { type: 'array' } });
  t.deepEqual(served.paths['/v1/streams/{stream}/records'].post.security, [{ bearer: ['stream:append'] }]);
  t.deepEqual(served.paths['/livez'].get.security, []);
});

test('every route is exercised, every answered status is declared, and every answer keeps the published contract', async (t) => {
  const { first, n1, n2 } = await twoNodes(t);
  // Each answer is held to the answering node's /openapi.json (ajv on its schemas): a mismatch throws.
  const checked = contractFetch();
  const url = n1.url;
  const admin = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = admin) =>
    checked(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const client = new StreamClient({ nodes: [url], token: TOKEN, fetch: contractFetch() });
  await eventually(async () => (await client.nodes()).nodes.length === 2, 'both registered');

  const statuses: Record<string, number> = {};
  const expect = async (label: string, response: Promise<Response>, status: number) => {
    const r = await response;
    await r.arrayBuffer();
    statuses[label] = r.status;
    t.is(r.status, status, label);
  };
  await expect('register', call('POST', '/v1/admin/nodes', { id: 'n3', address: 'http://127.0.0.1:9', slots: 1 }), 201);
  await expect('register again', call('POST', '/v1/admin/nodes', { id: 'n3', address: 'http://127.0.0.1:9', slots: 1 }), 200);
  await expect('register invalid', call('POST', '/v1/admin/nodes', { id: 'n3' }), 400);
  await expect('no token', call('POST', '/v1/admin/nodes', {}, { 'content-type': 'application/json' }), 401);
  await expect('wrong scope', call('GET', '/v1/admin/nodes', undefined, { authorization: `Bearer ${READER}` }), 403);
  await expect('not json', checked(`${url}/v1/admin/streams`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/plain' }, body: 's' }), 415);
  await expect('too large', call('POST', '/v1/streams/s/records', { records: [{ body: 'x'.repeat(3 * 1024 * 1024) }] }), 413);
  await expect('nodes', call('GET', '/v1/admin/nodes'), 200);
  await expect('node', call('GET', '/v1/admin/nodes/n1'), 200);
  await expect('unknown node', call('GET', '/v1/admin/nodes/n9'), 404);
  await expect('create', call('POST', '/v1/admin/streams', { stream: 's', node: 'n1' }), 201);
  await expect('create again', call('POST', '/v1/admin/streams', { stream: 's', node: 'n1' }), 200);
  await expect('create elsewhere', call('POST', '/v1/admin/streams', { stream: 's', node: 'n2' }), 409);
  await eventually(() => n1.node.session('s')?.writable === true, 'pre-warm on n1');
  await expect('append', call('POST', '/v1/streams/s/records', { records: [{ body: 'one' }] }), 200);
  await expect('append invalid', call('POST', '/v1/streams/s/records', { records: [] }), 400);
  await expect('append on non-owner', checked(`${n2.url}/v1/streams/s/records`, { method: 'POST', headers: admin, body: JSON.stringify({ records: [{ body: 'x' }] }) }), 409);
  await expect('read', call('GET', '/v1/streams/s/records?from=0'), 200);
  await expect('read invalid', call('GET', '/v1/streams/s/records?limit=0'), 400);
  await expect('describe', call('GET', '/v1/streams/s'), 200);
  await expect('describe unknown', call('GET', '/v1/streams/nope'), 404);
  await expect('maintenance', call('POST', '/v1/admin/nodes/n3/maintenance', { duration: '1h', start: new Date(Date.now() + 3_600_000).toISOString() }), 201); // clock-ok: a start an hour ahead
  await expect('maintenance invalid', call('POST', '/v1/admin/nodes/n3/maintenance', { duration: 0 }), 400);
  await expect('maintenance past the budget', call('POST', '/v1/admin/nodes/n1/maintenance', { duration: '2h', start: new Date(Date.now() + 3_600_000).toISOString() }), 409); // clock-ok
  await expect('maintenance unknown node', call('POST', '/v1/admin/nodes/n9/maintenance', { duration: '1h' }), 404);
  await expect('maintenance ended', call('DELETE', '/v1/admin/nodes/n3/maintenance'), 200);
  await expect('maintenance none', call('DELETE', '/v1/admin/nodes/n3/maintenance'), 404);
  await expect('set placement', call('PATCH', '/v1/admin/streams/s', { placement: {} }), 200);
  await expect('set placement unknown', call('PATCH', '/v1/admin/streams/nope', { placement: {} }), 404);
  await expect('set placement invalid', call('PATCH', '/v1/admin/streams/s', { placement: { require: { zone: 'z1' } } }), 400);
  await expect('ownership', call('GET', '/v1/streams/s/ownership'), 200);
  await expect('ownership unknown', call('GET', '/v1/streams/nope/ownership'), 404);
  await expect('ownership invalid', call('GET', '/v1/streams/no%20pe/ownership'), 400);
  await expect('transfer stale guard', call('POST', '/v1/admin/transfers', { stream: 's', target: 'n2' }, { ...admin, 'if-match': '"9"' }), 412);
  await expect('transfer bad guard', call('POST', '/v1/admin/transfers', { stream: 's', target: 'n2' }, { ...admin, 'if-match': 'nine' }), 400);
  await expect('transfer', call('POST', '/v1/admin/transfers', { stream: 's', target: 'n2' }, { ...admin, 'idempotency-key': 'move-s' }), 202);
  await expect('transfer key reused', call('POST', '/v1/admin/transfers', { stream: 's', target: 'n1' }, { ...admin, 'idempotency-key': 'move-s' }), 422);
  await expect('transfer unknown', call('POST', '/v1/admin/transfers', { stream: 'nope', target: 'n2' }), 404);
  await expect('transfers', call('GET', '/v1/admin/transfers'), 200);
  await expect('streams page', call('GET', '/v1/admin/streams?limit=1'), 200);
  await expect('streams bad page', call('GET', '/v1/admin/streams?limit=0'), 400);
  await expect('nodes bad page', call('GET', '/v1/admin/nodes?after=-x'), 400);
  await expect('transfers bad page', call('GET', '/v1/admin/transfers?after=nope'), 400);
  await eventually(async () => (await client.transferStatus('s')).status === 'settled', 'handoff');
  await expect('transfer status', call('GET', '/v1/admin/transfers/s'), 200);
  await expect('transfer status unknown', call('GET', '/v1/admin/transfers/nope'), 404);
  await expect('drain stale guard', call('POST', '/v1/admin/nodes/n3/drain', undefined, { ...admin, 'if-match': '"9"' }), 412);
  await expect('failover stale guard', call('POST', '/v1/admin/nodes/n3/failover', { force: true, expected_streams: 9 }), 412);
  await expect('drain', call('POST', '/v1/admin/nodes/n3/drain'), 202);
  await expect('drain unknown', call('POST', '/v1/admin/nodes/n9/drain'), 404);
  await expect('undrain', call('POST', '/v1/admin/nodes/n3/undrain'), 200);
  await expect('failover of a live node', call('POST', '/v1/admin/nodes/n3/failover'), 409);
  await expect('failover unknown', call('POST', '/v1/admin/nodes/n9/failover'), 404);
  await expect('failover forced', call('POST', '/v1/admin/nodes/n3/failover', { force: true }), 202);
  await expect('rebalance plan', call('POST', '/v1/admin/rebalance', { dryRun: true }), 200);
  await expect('rebalance', call('POST', '/v1/admin/rebalance', {}), 202);
  await expect('rebalance progress', call('GET', '/v1/admin/rebalance'), 200);
  await eventually(async () => {
    const [transfers, progress] = await Promise.all([call('GET', '/v1/admin/transfers'), call('GET', '/v1/admin/rebalance')]);
    return ((await transfers.json()) as { total: number }).total === 0 && ((await progress.json()) as { waiting: number }).waiting === 0;
  }, 'the rebalance to end');
  const planned = async (body: unknown) => ((await (await call('POST', '/v1/admin/plans', body)).json()) as { id: string }).id;
  const stale = await planned({ goal: 'rebalance' });
  await expect('create bumps the view', call('POST', '/v1/admin/streams', { stream: 'late', node: 'n1' }), 201);
  await expect('plan stale', call('POST', `/v1/admin/plans/${stale}/execute`), 412);
  await expect('plan', call('POST', '/v1/admin/plans', { goal: 'rebalance', limits: { maxConcurrent: 2 } }), 201);
  await expect('plan invalid', call('POST', '/v1/admin/plans', { goal: 'drain' }), 400);
  await expect('plan unknown node', call('POST', '/v1/admin/plans', { goal: { type: 'drain', nodes: ['n9'] } }), 404);
  const run = await planned({ goal: 'rebalance', limits: { maxConcurrent: 1 } });
  const waiting = await planned({ goal: 'restore-preferences' });
  await expect('plans', call('GET', '/v1/admin/plans'), 200);
  await expect('plan shown', call('GET', `/v1/admin/plans/${run}`), 200);
  await expect('plan unknown', call('GET', '/v1/admin/plans/plan-999999'), 404);
  await expect('plan bad id', call('GET', '/v1/admin/plans/x'), 400);
  await expect('plan execute', call('POST', `/v1/admin/plans/${run}/execute`), 202);
  await expect('plan execute again', call('POST', `/v1/admin/plans/${run}/execute`), 200);
  await expect('plan limits', call('PATCH', `/v1/admin/plans/${waiting}`, { maxConcurrent: 3, movesPerSecond: 5 }), 200);
  await expect('plan limits invalid', call('PATCH', `/v1/admin/plans/${waiting}`, { maxConcurrent: 0 }), 400);
  await expect('plan limits unknown', call('PATCH', '/v1/admin/plans/plan-999999', { maxConcurrent: 3 }), 404);
  await expect('plan cancel', call('DELETE', `/v1/admin/plans/${waiting}`), 200);
  await expect('plan cancel unknown', call('DELETE', '/v1/admin/plans/plan-999999'), 404);
  await expect('plan execute cancelled', call('POST', `/v1/admin/plans/${waiting}/execute`), 409);
  await expect('plan execute unknown', call('POST', '/v1/admin/plans/plan-999999/execute'), 404);
  await eventually(async () => ((await (await call('GET', '/v1/admin/audit?limit=1')).json()) as { records: unknown[] }).records.length === 1, 'a record in the audit store');
  const [newest] = ((await (await call('GET', '/v1/admin/audit?limit=1')).json()) as { records: { id: string }[] }).records;
  await expect('audit', call('GET', '/v1/admin/audit?kind=transfer_proposed&subject=s'), 200);
  await expect('audit unknown kind', call('GET', '/v1/admin/audit?kind=nope'), 400);
  await expect('audit unknown subject', call('GET', '/v1/admin/audit?subject=nope'), 400);
  await expect('audit chain', call('GET', '/v1/admin/audit/chain'), 200);
  await expect('audit record', call('GET', `/v1/admin/audit/${newest.id}`), 200);
  await expect('audit record unknown', call('GET', '/v1/admin/audit/999999-0'), 404);
  await expect('audit record invalid', call('GET', '/v1/admin/audit/x'), 400);
  await expect('openapi', call('GET', '/openapi.json'), 200);
  await expect('live', call('GET', '/livez'), 200);
  await expect('dashboard', call('GET', '/ui/'), 200);
  await expect('dashboard redirect', checked(`${url}/ui`, { redirect: 'manual' }), 308);
  await expect('dashboard script', call('GET', '/ui/app.js'), 200);
  await expect('no such dashboard file', call('GET', '/ui/secret.txt'), 404);
  await expect('cluster', call('GET', '/v1/admin/cluster'), 200);
  // The consensus administration: this fake consensus changes voters but neither moves its leader nor exports snapshots.
  await expect('voters', call('GET', '/v1/admin/consensus/members'), 200);
  await expect('add voter', call('POST', '/v1/admin/consensus/members', { id: 'n5', address: 'http://127.0.0.1:9' }), 201);
  await expect('add voter again', call('POST', '/v1/admin/consensus/members', { id: 'n5' }), 200);
  await expect('add voter invalid', call('POST', '/v1/admin/consensus/members', { id: 'n 5' }), 400);
  await expect('remove voter', call('DELETE', '/v1/admin/consensus/members/n5'), 200);
  await expect('remove unknown voter', call('DELETE', '/v1/admin/consensus/members/n9'), 404);
  await expect('leader move unsupported', call('POST', '/v1/admin/consensus/leader', { member: 'n1' }), 501);
  await expect('snapshot unsupported', call('GET', '/v1/admin/consensus/snapshot'), 501);
  await expect('member report', call('GET', '/v1/admin/cluster/member'), 200);
  await eventually(async () => (await call('GET', '/readyz')).status === 200, 'n1 to be ready');
  await expect('metrics', call('GET', '/metrics'), 200);

  const metrics = first.get(METRICS);
  const seen = await answered(metrics);
  const { routers, document } = streamApiRouters(n1.node, { metrics });
  // A request the admin scope check refuses counts under the route it asked for, so its 401
  // or 403 must be declared by that route.
  const refused = seen.filter((a) => a.path.startsWith('/v1/admin/') && (a.status === 401 || a.status === 403));
  t.deepEqual([...new Set(refused.map((a) => a.status))].sort(), [401, 403]);
  t.false(seen.some((a) => a.path.includes('(')), 'no route is labelled by a router pattern');
  t.deepEqual(undocumentedResponses(seen, document), [], 'every answered status is declared');
  const exercised = new Set(seen.filter((a) => !(a.status === 401 || a.status === 403)).map((a) => `${a.method} ${a.path}`));
  t.deepEqual(routedOperations(routers).operations.filter((op) => !exercised.has(op)), [], 'every route was exercised');
});

test('GET /metrics shows the handed-off transfer by outcome and duration, the consensus position and store errors', async (t) => {
  const { n1, n2 } = await twoNodes(t);
  const client = new StreamClient({ nodes: [n1.url], token: TOKEN, fetch: contractFetch() });
  await eventually(async () => (await client.nodes()).nodes.length === 2, 'both registered');
  await client.createStream('moved', 'n1');
  await eventually(() => n1.node.session('moved')?.writable === true, 'pre-warm on n1');
  await client.append('moved', ['a']);
  await client.transfer('moved', 'n2');
  await eventually(async () => (await client.transferStatus('moved')).status === 'settled', 'handoff');
  const scrape = async () => {
    const response = await fetch(`${n1.url}/metrics`);
    t.regex(response.headers.get('content-type') ?? '', /text\/plain/);
    return response.text();
  };
  // The source counts the transfer once it sees the completion applied.
  await eventually(async () => sample(await scrape(), 'baton_transfers_total', { outcome: 'completed' }) === 1, 'the completed transfer counted');
  const text = await scrape();
  t.is(sample(text, 'baton_transfers_total', { outcome: 'completed', node: 'n1' }), 1);
  t.is(sample(text, 'baton_transfer_duration_seconds_count', { outcome: 'completed', node: 'n1' }), 1);
  t.is(sample(text, 'baton_transfers_in_flight', { node: 'n1' }), 0);
  t.true((sample(text, 'baton_consensus_term', { node: 'n1' }) ?? 0) >= 1);
  t.true((sample(text, 'baton_consensus_applied_index', { node: 'n1' }) ?? 0) >= 4, 'registrations, create, transfer, close, complete');
  t.is(sample(text, 'baton_consensus_is_leader', { node: 'n1' }), 1);
  t.regex(text, /# TYPE baton_store_errors_total counter/);
  // The event loop's delay (perf_hooks monitorEventLoopDelay) is exported per quantile, the longest as 1.
  for (const quantile of ['0.5', '0.99', '1']) {
    const delay = sample(text, 'baton_event_loop_delay_seconds', { quantile, node: 'n1' });
    t.true(delay !== undefined && Number.isFinite(delay) && delay >= 0, `event-loop delay quantile ${quantile}: ${delay}`);
  }
  t.is(
    sample(text, 'baton_http_request_duration_seconds_count', { listener: 'streams', method: 'POST', route: '/v1/streams/{stream}/records', status: '200' }),
    1,
  );
  // The second host has its own registry: nothing of n1's transfer is counted there.
  const other = await (await fetch(`${n2.url}/metrics`)).text();
  t.is(sample(other, 'baton_transfers_total', { outcome: 'completed' }), undefined);
  // (n2 does publish n1's liveness, under stream_node: the member label is node.)
  t.notRegex(other, /[{,]node="n1"/);
});
