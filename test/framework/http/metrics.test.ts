import Router from '@koa/router';
import test from 'ava';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { PreconditionFailedError } from '@baton/contracts/internal/object-store.js';
import { createHost } from '@baton/kernel/internal/host.js';
import { BatonMetrics, METRICS } from '@baton/http/internal/metrics.js';
import { httpMetrics, metricsRouter } from '@baton/http/internal/metrics-http.js';
import { metricsPlugin } from '@baton/http/internal/metrics-plugin.js';
import { consensusReadingOf, countStoreErrors } from '@baton/http/internal/metrics-sources.js';
import { processEventLoopDelay } from '@baton/http/internal/event-loop-delay.js';
import { problems } from '@baton/http/internal/problem.js';
import { BearerTokens, requireScope } from '@baton/http/internal/auth.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { kvStateMachine } from '@baton/conformance/internal/kv-state-machine.js';
import { eventually } from '../../hosts/eventually.js';
import { call, startApi } from './harness.js';

/** The value of one sample line (`name{labels} value`) in the exposition text. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('each BatonMetrics has its own registry: two in one process do not clash', async (t) => {
  const a = new BatonMetrics({ defaultMetrics: true });
  const b = new BatonMetrics({ defaultMetrics: true });
  a.recordTransfer('committed', 1500);
  a.recordTransfer('committed', 20);
  b.recordTransfer('cancelled', 5);
  const textA = (await a.render()).body;
  const textB = (await b.render()).body;
  t.is(sample(textA, 'baton_transfers_total', '{outcome="committed"}'), 2);
  t.is(sample(textA, 'baton_transfers_total', '{outcome="cancelled"}'), undefined);
  t.is(sample(textB, 'baton_transfers_total', '{outcome="cancelled"}'), 1);
  t.is(sample(textA, 'baton_transfer_duration_seconds_sum', '{outcome="committed"}'), 1.52);
  t.is(sample(textA, 'baton_transfer_duration_seconds_bucket', '{le="1",outcome="committed"}'), 1);
  t.true(textA.includes('process_cpu_user_seconds_total'));
});

test('gauges read their bound sources at scrape time', async (t) => {
  const metrics = new BatonMetrics({ defaultMetrics: false, labels: { member: 'n1' } });
  let inFlight = 3;
  metrics.observeTransfersInFlight(() => inFlight);
  metrics.observeConsensus(() => ({ term: 7, appliedIndex: 41, commitIndex: 42, isLeader: true }));
  let text = (await metrics.render()).body;
  t.is(sample(text, 'baton_transfers_in_flight', '{member="n1"}'), 3);
  t.is(sample(text, 'baton_consensus_term', '{member="n1"}'), 7);
  t.is(sample(text, 'baton_consensus_applied_index', '{member="n1"}'), 41);
  t.is(sample(text, 'baton_consensus_commit_index', '{member="n1"}'), 42);
  t.is(sample(text, 'baton_consensus_is_leader', '{member="n1"}'), 1);
  inFlight = 0;
  text = (await metrics.render()).body;
  t.is(sample(text, 'baton_transfers_in_flight', '{member="n1"}'), 0);
});

test('consensusReadingOf reads term, leadership and applied index from the contract', async (t) => {
  const consensus = new LocalConsensus(kvStateMachine, { self: 'n1', term: 3 });
  t.teardown(() => consensus.stop());
  await consensus.propose({ op: 'put', key: 'a', value: '1' });
  await consensus.propose({ op: 'put', key: 'b', value: '2' });
  const reading = consensusReadingOf(consensus)();
  t.is(reading.appliedIndex, consensus.view().applied.index);
  t.is(reading.term, consensus.leadership().term);
  t.is(reading.isLeader, consensus.leadership().isLeader);
  t.is(reading.term, 3);
  t.true(reading.isLeader);
  t.true(reading.appliedIndex >= 2);
});

test('countStoreErrors counts StoreUnavailableError by store and operation, and only those', async (t) => {
  const metrics = new BatonMetrics({ defaultMetrics: false });
  let failures = 0;
  const store = countStoreErrors(
    {
      name: 'raw',
      async get(key: string) {
        failures++;
        throw new StoreUnavailableError('object store', `timeout reading ${key}`);
      },
      async put(key: string) {
        throw new PreconditionFailedError(key);
      },
      sync() {
        throw new StoreUnavailableError('object store', 'sync failed');
      },
      async head(key: string) {
        return { key, size: 1 };
      },
    },
    'object',
    metrics,
  );
  await t.throwsAsync(store.get('k'), { instanceOf: StoreUnavailableError });
  await t.throwsAsync(store.get('k'), { instanceOf: StoreUnavailableError });
  await t.throwsAsync(store.put('k'), { instanceOf: PreconditionFailedError });
  t.throws(() => store.sync(), { instanceOf: StoreUnavailableError });
  t.deepEqual(await store.head('k'), { key: 'k', size: 1 });
  t.is(store.name, 'raw');
  t.is(failures, 2);
  const text = (await metrics.render()).body;
  t.is(sample(text, 'baton_store_errors_total', '{store="object",operation="get"}'), 2);
  t.is(sample(text, 'baton_store_errors_total', '{store="object",operation="sync"}'), 1);
  t.is(sample(text, 'baton_store_errors_total', '{store="object",operation="put"}'), undefined);
});

test('/metrics serves the exposition format, and request durations are labelled by route template', async (t) => {
  const metrics = new BatonMetrics({ defaultMetrics: false });
  const router = new Router();
  router.get('/v1/streams/:stream', (ctx) => {
    ctx.body = { stream: ctx.params.stream };
  });
  router.get('/v1/fail', () => {
    throw problems.conflict('busy');
  });
  const api = await startApi([router, metricsRouter(metrics)], { metrics, listener: 'public' });
  t.teardown(api.stop);
  await call(`${api.url}/v1/streams/alpha`);
  await call(`${api.url}/v1/streams/beta`);
  await call(`${api.url}/v1/fail`);
  await call(`${api.url}/no/such/path/${'x'.repeat(10)}`);
  const response = await fetch(`${api.url}/metrics`);
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  const count = (labels: string) => sample(text, 'baton_http_request_duration_seconds_count', labels);
  t.is(count('{listener="public",method="GET",route="/v1/streams/{stream}",status="200"}'), 2);
  t.is(count('{listener="public",method="GET",route="/v1/fail",status="409"}'), 1);
  t.is(count('{listener="public",method="GET",route="unmatched",status="404"}'), 1);
  t.false(text.includes('alpha'));
});

test('refused requests count under the route template they asked for: a router-wide guard, a missing token, an unknown token, a wrong method', async (t) => {
  const metrics = new BatonMetrics({ defaultMetrics: false });
  const admin = new Router({ prefix: '/v1/admin' });
  // A guard for the whole router: it answers before the route's own handler runs.
  admin.use(requireScope('admin'));
  admin.get('/streams/:stream', (ctx) => {
    ctx.body = { stream: ctx.params.stream };
  });
  const api = await startApi([admin, metricsRouter(metrics)], {
    metrics,
    listener: 'admin',
    tokens: new BearerTokens([{ token: 'good', principal: 'ops', scopes: ['admin', 'stream:append', 'stream:read'] }]),
  });
  t.teardown(api.stop);
  t.is((await call(`${api.url}/v1/admin/streams/a`)).status, 401);
  t.is((await call(`${api.url}/v1/admin/streams/b`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
  t.is((await call(`${api.url}/v1/admin/streams/c`, { headers: { authorization: 'Bearer good' } })).status, 200);
  t.is((await call(`${api.url}/v1/admin/streams/d`, { method: 'DELETE', headers: { authorization: 'Bearer good' } })).status, 405);
  const text = await (await fetch(`${api.url}/metrics`)).text();
  const count = (labels: string) => sample(text, 'baton_http_request_duration_seconds_count', labels);
  t.is(count('{listener="admin",method="GET",route="/v1/admin/streams/{stream}",status="401"}'), 2);
  t.is(count('{listener="admin",method="GET",route="/v1/admin/streams/{stream}",status="200"}'), 1);
  t.is(count('{listener="admin",method="DELETE",route="/v1/admin/streams/{stream}",status="405"}'), 1);
  t.notRegex(text, /route="[^"]*[(?\\|$]/, 'no label is a router pattern');
});

test('metricsPlugin gives each host its own metrics', async (t) => {
  const first = createHost().add(metricsPlugin, { defaultMetrics: false }).build();
  const second = createHost().add(metricsPlugin, { defaultMetrics: false, labels: { member: 'n2' } }).build();
  await first.start();
  await second.start();
  t.teardown(async () => {
    await first.stop();
    await second.stop();
  });
  const a = first.get(METRICS);
  const b = second.get(METRICS);
  t.not(a, b);
  t.is(first.get(METRICS), a);
  a.recordTransfer('committed', 1);
  t.is(sample((await b.render()).body, 'baton_transfers_total', '{outcome="committed",member="n2"}'), undefined);
  t.is(sample((await a.render()).body, 'baton_transfers_total', '{outcome="committed"}'), 1);
  t.throws(() => createHost().add(metricsPlugin, { labels: { member: 3 } }).build(), { message: /invalid options for plugin metrics/ });
});

test('httpMetrics on its own observes a request that escaped every handler as a 500', async (t) => {
  const metrics = new BatonMetrics({ defaultMetrics: false });
  const middleware = httpMetrics(metrics, new SystemClock(), 'bare');
  const ctx = { method: 'GET', status: 404, _matchedRoute: '/v1/streams/:stream', matched: [{ path: '/v1/streams/:stream', methods: ['HEAD', 'GET'] }] } as any;
  await t.throwsAsync(
    middleware(ctx, async () => {
      throw new Error('escaped');
    }),
    { message: 'escaped' },
  );
  const text = (await metrics.render()).body;
  t.is(
    sample(text, 'baton_http_request_duration_seconds_count', '{listener="bare",method="GET",route="/v1/streams/{stream}",status="500"}'),
    1,
  );
});

test('baton_event_loop_delay_seconds shows a stall of the event loop at the next scrape', async (t) => {
  const metrics = new BatonMetrics({ defaultMetrics: false, labels: { member: 'n1' } });
  const max = async () => sample((await metrics.render()).body, 'baton_event_loop_delay_seconds', '{quantile="1",member="n1"}');
  const p99 = async () => sample((await metrics.render()).body, 'baton_event_loop_delay_seconds', '{quantile="0.99",member="n1"}');
  t.true((await max())! >= 0, 'the series exists from the first scrape');
  t.true((await p99())! >= 0);
  // The monitor measures the gap between its own samples, so it must have taken one before the stall.
  await eventually(() => processEventLoopDelay().samples() > 0, 'the event-loop monitor to take its first sample');
  // Hold the loop well past the monitor's 10 ms resolution.
  const start = performance.now();
  while (performance.now() - start < 80) {
    /* busy: the loop cannot run the monitor's timer */
  }
  await eventually(async () => (await max())! >= 0.05, 'the stall to show in quantile 1');
  t.true((await max())! >= 0.05);
});
