import test from 'ava';
import { GRPCDeadlineExceededError, GRPCUnavailableError } from 'etcd3';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { certainlyNotSent } from '@baton/plugin-etcd/internal/etcd-errors.js';
import { EndpointHealth } from '@baton/plugin-etcd/internal/endpoint-health.js';

const ENDPOINTS = ['http://a:2379', 'http://b:2379', 'http://c:2379'];

function setup() {
  const clock = new VirtualClock();
  const health = new EndpointHealth(ENDPOINTS, clock, { unreachableMs: 100, suspectMs: 1_000 });
  const policies = ENDPOINTS.map((endpoint) => health.policyFor(endpoint));
  const run = (i: number, outcome: () => unknown) =>
    policies[i].execute(() => Promise.resolve().then(outcome));
  const timeout = () => {
    throw new GRPCDeadlineExceededError('Deadline exceeded');
  };
  return { clock, health, run, timeout };
}

test('a timed-out endpoint is skipped while another serves, with an error saying nothing was sent, and trusted again after the suspicion', async (t) => {
  const { clock, health, run, timeout } = setup();
  await t.throwsAsync(run(0, timeout), { instanceOf: GRPCDeadlineExceededError });
  t.is(health.stats()[0].avoided, 'suspect');
  const skipped = await t.throwsAsync(run(0, () => 'never called'));
  t.true(certainlyNotSent(skipped), 'the pool may try the next endpoint: nothing was sent');
  t.is(await run(1, () => 'b answers'), 'b answers');
  t.deepEqual(
    health.stats().map(({ calls, timeouts, skipped }) => ({ calls, timeouts, skipped })),
    [
      { calls: 1, timeouts: 1, skipped: 1 },
      { calls: 1, timeouts: 0, skipped: 0 },
      { calls: 0, timeouts: 0, skipped: 0 },
    ],
  );

  clock.advance(999);
  await t.throwsAsync(
    run(0, () => 'never called'),
    { message: /timed out/ },
  );
  clock.advance(1);
  t.is(await run(0, () => 'a answers again'), 'a answers again');
  t.is(health.stats()[0].avoided, undefined);
});

test('"request timed out" from etcd makes an endpoint suspect; a refused connection only skips it briefly; other errors change nothing', async (t) => {
  const { clock, health, run } = setup();
  await t.throwsAsync(
    run(0, () => {
      throw new GRPCUnavailableError('etcdserver: request timed out');
    }),
  );
  await t.throwsAsync(
    run(1, () => {
      throw new GRPCUnavailableError('No connection established. Last error: connect ECONNREFUSED');
    }),
  );
  await t.throwsAsync(
    run(2, () => {
      throw new Error('etcdserver: mvcc: required revision has been compacted');
    }),
  );
  t.deepEqual(
    health.stats().map((entry) => entry.avoided),
    ['suspect', 'unreachable', undefined],
  );
  clock.advance(100);
  t.deepEqual(
    health.stats().map((entry) => entry.avoided),
    ['suspect', undefined, undefined],
  );
});

test('with every endpoint in doubt, a request still goes out rather than fail unsent; the one that answers is preferred again', async (t) => {
  const { health, run, timeout } = setup();
  for (const i of [0, 1, 2]) await t.throwsAsync(run(i, timeout));
  t.true(health.stats().every((entry) => entry.avoided === 'suspect'));
  t.is(await run(1, () => 'b answers'), 'b answers');
  t.deepEqual(
    health.stats().map((entry) => entry.avoided),
    ['suspect', undefined, 'suspect'],
  );
  // b serves again, so the other two are skipped while their suspicion lasts.
  await t.throwsAsync(
    run(0, () => 'never called'),
    { message: /timed out/ },
  );
  t.is(health.stats()[0].calls, 1);
});

test('an endpoint the client was not given is a wiring mistake, named', (t) => {
  const { health } = setup();
  t.throws(() => health.policyFor('http://elsewhere:2379'), { message: /elsewhere.*not one of/ });
});
