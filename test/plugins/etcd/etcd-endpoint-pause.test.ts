import test from 'ava';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { createEtcdClient } from '@baton/plugin-etcd/internal/etcd-client.js';
import { EndpointHealth, type EndpointStats } from '@baton/plugin-etcd/internal/endpoint-health.js';
import { etcdConsensusOptions } from '@baton/plugin-etcd/internal/options.js';
import { etcdLeaderIndex } from '../../hosts/etcd-leader.js';
import { EntryLedger } from './entry-ledger.js';
import { freshPrefix, outcome, startGroup } from './etcd-fixture.js';

const REQUEST_TIMEOUT_MS = 1_000;

function statsOf(stats: EndpointStats[], endpoint: string): EndpointStats {
  const found = stats.find((entry) => entry.endpoint === endpoint);
  if (!found) throw new Error(`no stats for ${endpoint}`);
  return found;
}

/** A follower of the etcd cluster: pausing it stalls no election, so only the client's choice of endpoint is tested. */
async function anEtcdFollower(cluster: EtcdCluster): Promise<number> {
  return ((await etcdLeaderIndex(cluster.endpoints)) + 1) % cluster.endpoints.length;
}

test('a request that times out against a paused etcd member makes the next ones go to the other members until the suspicion passes', async (t) => {
  const cluster = await EtcdCluster.start({ size: 3 });
  t.teardown(() => cluster.close());
  const system = new SystemClock();
  // The suspicion runs on a clock of its own, so the test decides when it passes.
  const suspicionClock = new VirtualClock(system.now());
  const options = etcdConsensusOptions.parse({
    endpoints: cluster.endpoints,
    memberId: 'client-test',
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    timeoutSuspicionMs: 5_000,
  });
  const health = new EndpointHealth(cluster.endpoints, suspicionClock, {
    unreachableMs: options.retryMaxMs,
    suspectMs: options.timeoutSuspicionMs,
  });
  const client = createEtcdClient(options, suspicionClock, health);
  t.teardown(() => client.close());
  const key = `${freshPrefix('endpoint-pause')}k`;
  const get = () =>
    client
      .get(key)
      .options({ deadline: new Date(system.now() + REQUEST_TIMEOUT_MS) })
      .string();
  await client.put(key).value('v');

  // Every endpoint connected first: the pool picks a random first endpoint per request.
  for (let i = 0; i < 200 && health.stats().some((entry) => entry.calls === 0); i++) {
    t.is(await get(), 'v');
  }
  t.true(
    health.stats().every((entry) => entry.calls > 0),
    'every endpoint was used',
  );

  const index = await anEtcdFollower(cluster);
  const paused = cluster.endpoints[index];
  cluster.member(index).pause();
  // Until one request lands on the paused member, the others answer; that one times out.
  const failures: unknown[] = [];
  for (let i = 0; i < 60 && statsOf(health.stats(), paused).timeouts === 0; i++) {
    const result = await outcome(get());
    if (result.error) failures.push(result.error);
    else t.is(result.value, 'v');
  }
  const afterTimeout = statsOf(health.stats(), paused);
  t.is(afterTimeout.timeouts, 1, 'one request was sent to the paused member and timed out');
  t.is(failures.length, 1, 'only that request failed');
  t.is(afterTimeout.avoided, 'suspect');

  // The next requests all succeed through the two others, none sent to the paused member.
  for (let i = 0; i < 30; i++) t.is(await get(), 'v');
  const switched = statsOf(health.stats(), paused);
  t.is(switched.calls, afterTimeout.calls, 'no request went to the paused member');
  t.true(switched.skipped >= 1, 'requests that would have gone there went elsewhere');

  // The suspicion is bounded: once it passes, the resumed member is used again.
  cluster.member(index).resume();
  suspicionClock.advance(options.timeoutSuspicionMs);
  t.is(statsOf(health.stats(), paused).avoided, undefined);
  for (let i = 0; i < 200 && statsOf(health.stats(), paused).calls === switched.calls; i++) {
    await outcome(get());
  }
  t.true(statsOf(health.stats(), paused).calls > switched.calls, 'the resumed member got requests');
});

test('proposals and reads through a paused etcd member: the one that waited on it still commits by retrying elsewhere, the next ones never wait on it', async (t) => {
  const cluster = await EtcdCluster.start({ size: 3 });
  t.teardown(() => cluster.close());
  // A suspicion longer than the test: the counts below then do not depend on how fast it runs.
  const group = await startGroup(cluster, 1, {
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    timeoutSuspicionMs: 600_000,
  });
  t.teardown(() => group.stop());
  const [member] = group.members;
  const ledger = new EntryLedger(member);
  let n = 0;
  const propose = async () => {
    const value = `v${n++}`;
    await member.propose({ op: 'put', key: 'k', value }, { idempotencyKey: value });
  };
  for (let i = 0; i < 200 && member.endpoints().some((entry) => entry.calls === 0); i++) {
    await propose();
  }
  t.true(
    member.endpoints().every((entry) => entry.calls > 0),
    'every endpoint was used',
  );

  const index = await anEtcdFollower(cluster);
  const paused = cluster.endpoints[index];
  cluster.member(index).pause();
  t.teardown(() => cluster.member(index).resume());
  // Each proposal and read must succeed: one whose request waited on the paused member retries
  // on another within its own deadline (the appender's retry at the same log position).
  for (let i = 0; i < 60 && statsOf(member.endpoints(), paused).timeouts === 0; i++) {
    await propose();
    await member.read();
  }
  const afterTimeout = statsOf(member.endpoints(), paused);
  t.true(afterTimeout.timeouts >= 1, 'a request was sent to the paused member and timed out');
  t.is(afterTimeout.avoided, 'suspect');

  for (let i = 0; i < 20; i++) {
    await propose();
    await member.read();
  }
  const switched = statsOf(member.endpoints(), paused);
  t.is(switched.calls, afterTimeout.calls, 'no request went to the paused member');
  t.true(switched.skipped >= 1, 'requests that would have gone there went elsewhere');

  const values = ledger.values();
  t.is(values.length, n, 'every proposal was applied');
  t.is(new Set(values).size, values.length, 'none twice');
});
