import test from 'ava';
import { Etcd3 } from 'etcd3';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import { etcdLeaderIndex } from '../../hosts/etcd-leader.js';
import { eventually } from '../../hosts/eventually.js';

test('a paused etcd leader answers nothing while the other two elect a new one, serves again once resumed, and a paused member still stops', async (t) => {
  const cluster = await EtcdCluster.start({ size: 3 });
  t.teardown(() => cluster.close());
  const first = await etcdLeaderIndex(cluster.endpoints);
  const paused = cluster.member(first);

  paused.pause();
  t.true(paused.isPaused);
  await eventually(async () => {
    const index = await etcdLeaderIndex(cluster.endpoints, 1_000);
    return cluster.endpoints[index] !== paused.clientUrl;
  }, 'the two running members to elect another leader');
  // The paused member is left out of the answers: it said nothing within the deadline.
  await t.throwsAsync(etcdLeaderIndex([paused.clientUrl], 1_000), {
    message: /no etcd member answered/,
  });

  paused.resume();
  t.false(paused.isPaused);
  const client = new Etcd3({ hosts: paused.clientUrl });
  t.teardown(() => client.close());
  const clock = new SystemClock();
  // A linearizable read at the resumed member needs it back in the cluster, behind the leader.
  await eventually(async () => {
    await client
      .put('probe')
      .value('after the pause')
      .options({ deadline: new Date(clock.now() + 1_000) });
    const value = await client
      .get('probe')
      .options({ deadline: new Date(clock.now() + 1_000) })
      .string();
    return value === 'after the pause';
  }, 'the resumed member to serve a linearizable read');

  // A clean stop of a paused member resumes it first (a stopped process handles no SIGTERM).
  paused.pause();
  await paused.stop();
  t.false(paused.running);
});
