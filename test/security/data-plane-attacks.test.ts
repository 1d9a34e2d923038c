import test, { type ExecutionContext } from 'ava';
import { eventually } from '../hosts/eventually.js';
import { call, problemTypeOf, type CallAnswer } from '../support/https-call.js';
import { openFlood } from './connection-flood.js';
import { BILLING_TOKEN, dataPlaneCluster, MALLORY_TOKEN, ORDERS_TOKEN, peakRss, READ_ONLY_TOKEN } from './data-plane-cluster.js';

// Attacks on a stream node's data plane, each on three real member processes configured as
// `baton up` configures them.

test.serial('the data API takes no anonymous caller: append and read answer 401 before the body is read; scopes decide per action and stream pattern; a 1.5 MiB append answers 413', async (t) => {
  t.timeout(180_000);
  const c = await dataPlaneCluster(t);
  const owner = c.leader === 'n1' ? 'n2' : 'n1';
  await c.createWritable('billing-events', owner);
  await c.createWritable('orders-1', owner);

  const anonymousAppend = await c.append(owner, 'billing-events', { records: [{ body: 'x' }], producer: { id: 'billing', seq: 9007199254740991 } });
  t.is(anonymousAppend.status, 401);
  t.is(problemTypeOf(anonymousAppend), 'unauthenticated');
  for (const node of ['n1', 'n2', 'n3']) {
    t.is((await c.read(node, 'billing-events')).status, 401, `anonymous read at ${node}`);
    t.is((await call(`${c.urlOf(node)}/v1/streams/billing-events`)).status, 401, `anonymous describe at ${node}`);
  }
  // Anonymous before anything else: an invalid stream id is not even looked at.
  t.is((await c.append(owner, '%20bad', { records: [] })).status, 401);
  // An unknown token is refused on the data plane as everywhere.
  t.is((await c.append(owner, 'billing-events', { records: [{ body: 'x' }] }, 'not-a-token-of-this-cluster')).status, 401);

  // The anonymous attempt left the real producer's sequence alone.
  const first = await c.append(owner, 'billing-events', { records: [{ body: 'b0' }], producer: { id: 'billing', seq: 0 } }, BILLING_TOKEN);
  t.is(first.status, 200, JSON.stringify(first.body));

  // Scopes per action: a reader reads and may not append.
  t.is((await c.read(owner, 'billing-events', READ_ONLY_TOKEN)).status, 200);
  const readerAppend = await c.append(owner, 'billing-events', { records: [{ body: 'x' }] }, READ_ONLY_TOKEN);
  t.is(readerAppend.status, 403);
  t.is(problemTypeOf(readerAppend), 'insufficient-scope');
  // Scopes per stream pattern: stream:append:orders-* appends to orders-1 only, and reads nothing.
  t.is((await c.append(owner, 'orders-1', { records: [{ body: 'o' }] }, ORDERS_TOKEN)).status, 200);
  t.is((await c.append(owner, 'billing-events', { records: [{ body: 'o' }] }, ORDERS_TOKEN)).status, 403);
  t.is((await c.read(owner, 'orders-1', ORDERS_TOKEN)).status, 403);

  // The append bound is the README's 1 MiB: 1.5 MiB answers 413, whoever sends it.
  const big = { records: [{ body: 'x'.repeat(1.5 * 1024 * 1024) }] };
  const tooLarge = await c.append(owner, 'billing-events', big, BILLING_TOKEN);
  t.is(tooLarge.status, 413);
  t.is(problemTypeOf(tooLarge), 'body-too-large');
  const fits = await c.append(owner, 'billing-events', { records: [{ body: 'x'.repeat(1_000_000) }] }, BILLING_TOKEN);
  t.is(fits.status, 200);

  // Every answer says nosniff: a success, a refusal, a probe.
  for (const path of ['/v1/streams/billing-events', '/healthz', '/v1/admin/nodes']) {
    const answer = await fetch(`${c.urlOf(owner)}${path}`);
    t.is(answer.headers.get('x-content-type-options'), 'nosniff', path);
    await answer.arrayBuffer();
  }
});

test.serial("a producer id is its principal's own: another principal's use answers 403 and leaves the sequence alone; 1,000 producer ids of one principal do not evict another's mark", async (t) => {
  t.timeout(180_000);
  const c = await dataPlaneCluster(t);
  const owner = c.leader === 'n1' ? 'n2' : 'n1';
  await c.createWritable('payments', owner);

  const billing0 = await c.append(owner, 'payments', { records: [{ body: 'b0' }], producer: { id: 'billing', seq: 0 } }, BILLING_TOKEN);
  t.is(billing0.status, 200);
  const poison = await c.append(owner, 'payments', { records: [{ body: 'evil' }], producer: { id: 'billing', seq: 9007199254740991 } }, MALLORY_TOKEN);
  t.is(poison.status, 403);
  t.is(problemTypeOf(poison), 'producer-held');

  const billing1 = await c.append(owner, 'payments', { records: [{ body: 'b1' }], producer: { id: 'billing', seq: 1 } }, BILLING_TOKEN);
  t.is(billing1.status, 200, JSON.stringify(billing1.body));
  const offsets = (billing1.body as { offsets: number[] }).offsets;

  // Mallory writes under 1,000 producer ids of its own (more than a stream remembers per principal).
  for (let batch = 0; batch < 10; batch++) {
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        c.append(owner, 'payments', { records: [{ body: 'm' }], producer: { id: `m-${batch * 100 + i}`, seq: 0 } }, MALLORY_TOKEN),
      ),
    );
    t.true(answers.every((a) => a.status === 200), JSON.stringify(answers.find((a) => a.status !== 200)));
  }
  t.is((await c.append(owner, 'payments', { records: [{ body: 'm' }], producer: { id: 'm-1000', seq: 0 } }, MALLORY_TOKEN)).status, 200);

  // Billing's retry of seq 1 is still recognised: the same offsets, nothing appended twice.
  const retry = await c.append(owner, 'payments', { records: [{ body: 'b1' }], producer: { id: 'billing', seq: 1 } }, BILLING_TOKEN);
  t.is(retry.status, 200);
  t.like(retry.body, { duplicate: true, offsets });
  const records = (await c.read(owner, 'payments', BILLING_TOKEN, '?limit=1000')).body as { records: { body: string }[] };
  t.is(records.records.filter((r) => r.body === 'b1').length, 1);
  t.is(records.records.filter((r) => r.body === 'evil').length, 0);
});

/**
 * Floods the metadata leader with 22,000 connections that never finish a request, and checks
 * that meanwhile it answers admin requests and takes appends, that its lease keeps being
 * renewed, and that no other member ever sees it Suspect or Dead; afterwards the term and every
 * owner are unchanged.
 */
async function leaderKeepsItsDuties(t: ExecutionContext, options: { tls?: boolean }) {
  const c = await dataPlaneCluster(t, options);
  const target = c.leader;
  for (let i = 0; i < 5; i++) await c.createWritable(`held-${i}`, target);
  const ownersBefore = await c.owners();
  const termBefore = (await c.report(target)).term;

  const verdicts: string[] = [];
  let watching = true;
  // Another member watches the target's published liveness all through the flood.
  const watcher = (async () => {
    const other = target === 'n1' ? 'n2' : 'n1';
    while (watching) {
      const answer = await c.call(`${c.urlOf(other)}/v1/admin/nodes/${target}`, { headers: c.operator }).catch(() => undefined);
      const liveness = (answer?.body as { liveness?: string } | undefined)?.liveness;
      if (liveness) verdicts.push(liveness);
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  const flood = await openFlood(c.urlOf(target), 22_000);
  t.teardown(() => flood.end());
  t.log(`${flood.open.size} flood connections still open, ${flood.closedByListener()} closed by the node`);
  t.true(flood.open.size <= 8_192, 'the node holds no more connections than its cap');

  // With the flood still open: the admin API answers, appends are taken, the lease renews.
  t.is((await c.call(`${c.urlOf(target)}/v1/admin/nodes`, { headers: c.operator })).status, 200);
  t.is((await c.append(target, 'held-0', { records: [{ body: 'during' }] }, BILLING_TOKEN)).status, 200);
  const renewedAgo = async () =>
    ((await c.call(`${c.urlOf(target)}/v1/admin/nodes/${target}`, { headers: c.operator })).body as { lastRenewalMsAgo?: number | null }).lastRenewalMsAgo;
  await eventually(async () => {
    const ago = await renewedAgo();
    return typeof ago === 'number' && ago < 2_000;
  }, 'a recent lease renewal of the flooded node', 30_000);
  watching = false;
  await watcher;

  t.true(verdicts.length > 0);
  t.deepEqual([...new Set(verdicts)], ['Alive'], 'the flooded node was never Suspect or Dead');
  t.is((await c.report(target)).term, termBefore, 'no election');
  t.deepEqual(await c.owners(), ownersBefore, 'no stream moved');
}

test.serial('22,000 idle, slow-header and slow-body connections to a stream node leave it Alive, serving admin requests and renewing its lease, with no term change and no failover', async (t) => {
  t.timeout(300_000);
  await leaderKeepsItsDuties(t, {});
});

test.serial('the same flood on a TLS listener (handshakes never begun or left half way) changes nothing either', async (t) => {
  t.timeout(300_000);
  await leaderKeepsItsDuties(t, { tls: true });
});

test.serial('1,000 concurrent 1 MiB authenticated appends keep the node under 600 MB, the term unchanged and every stream in place; refused ones answer 503 with Retry-After', async (t) => {
  t.timeout(300_000);
  const c = await dataPlaneCluster(t);
  const target = c.leader;
  for (let i = 0; i < 4; i++) await c.createWritable(`bulk-${i}`, target);
  const ownersBefore = await c.owners();
  const termBefore = (await c.report(target)).term;
  const longestLoopDelay = async () => {
    const metrics = String((await c.call(`${c.urlOf(target)}/metrics`, { headers: c.operator })).body);
    return /^baton_event_loop_delay_seconds\{[^}]*quantile="1"[^}]*\} (\S+)/m.exec(metrics)?.[1];
  };

  const body = { records: [{ body: 'x'.repeat(1_000_000) }] };
  t.log(`longest event-loop delay before the flood: ${await longestLoopDelay()} s`);
  const answers = await Promise.all(
    Array.from({ length: 1_000 }, (_, i) =>
      c.append(target, `bulk-${i % 4}`, body, BILLING_TOKEN).catch((e: Error): CallAnswer => ({ status: 0, body: e.message, type: null })),
    ),
  );
  const byStatus = new Map<number, number>();
  for (const answer of answers) byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1);
  t.log(`answers by status: ${JSON.stringify(Object.fromEntries(byStatus))}`);
  t.true(answers.some((a) => a.status === 200), 'some appends are taken');
  for (const answer of answers) {
    t.true(answer.status === 200 || answer.status === 503, `answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 200)}`);
    if (answer.status === 503) t.truthy(answer.headers?.['retry-after'], 'a refused append says when to retry');
  }
  const rss = peakRss(c.cluster.pid(target)!);
  t.log(`peak RSS of the flooded node: ${(rss / 1024 / 1024).toFixed(0)} MB`);
  t.log(`longest event-loop delay of the flooded node since start: ${await longestLoopDelay()} s`);
  t.true(rss < 600 * 1024 * 1024, `peak RSS ${rss} bytes`);
  t.is((await c.report(target)).term, termBefore, 'no election');
  t.deepEqual(await c.owners(), ownersBefore, 'no stream moved');
  t.deepEqual([...new Set(Object.values(await c.liveness()))], ['Alive']);
});
