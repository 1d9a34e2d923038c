import test from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { runBaton } from './run-baton.js';
import { startStreamCluster, type StreamCluster } from './stream-cluster.js';

const cwd = process.cwd();

async function baton(cluster: StreamCluster, ...args: string[]) {
  return runBaton(args, { cwd, env: cluster.env });
}

test('streams transfer --if-epoch moves nothing on a stale epoch (exit 1, the 412 said), moves on the current one; --key replays', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2']);
  t.is((await baton(cluster, 'streams', 'create', 'events', '--owner', 'n1')).code, ExitCode.Ok);
  await cluster.writable('events');
  const stale = await baton(cluster, 'streams', 'transfer', 'events', '--to', 'n2', '--if-epoch', '2');
  t.is(stale.code, ExitCode.Failed);
  t.regex(stale.stderr, /refused \(412\): stream events is owned by n1 at epoch 1, not epoch 2 as expected/);
  t.like(cluster.consensus.view().state.stream('events')!, { owner: 'n1', epoch: 1 });

  const moved = await baton(cluster, 'streams', 'transfer', 'events', '--to', 'n2', '--if-epoch', '1', '--key', 'move-events', '--no-wait', '--json');
  t.is(moved.code, ExitCode.Ok, moved.stderr);
  t.like(JSON.parse(moved.stdout), { status: 'pending', source: 'n1', target: 'n2' });
  const again = await baton(cluster, 'streams', 'transfer', 'events', '--to', 'n2', '--if-epoch', '1', '--key', 'move-events', '--no-wait', '--json');
  t.is(again.code, ExitCode.Ok, again.stderr);
  t.like(JSON.parse(again.stdout), { status: 'pending', source: 'n1', target: 'n2' });
  const reused = await baton(cluster, 'streams', 'transfer', 'events', '--to', 'n1', '--key', 'move-events', '--no-wait');
  t.is(reused.code, ExitCode.Failed);
  t.regex(reused.stderr, /\(422\)/);
});

test('streams drain and failover --if-streams refuse a stale count; a bad --key or --if-epoch is a usage error', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2']);
  t.is((await baton(cluster, 'streams', 'create', 'events', '--owner', 'n1')).code, ExitCode.Ok);
  const drain = await baton(cluster, 'streams', 'drain', 'n1', '--yes', '--if-streams', '3');
  t.is(drain.code, ExitCode.Failed);
  t.regex(drain.stderr, /refused \(412\): node n1 owns 1 streams, not 3 as expected/);
  t.false(cluster.consensus.view().state.node('n1')!.draining);
  const failover = await baton(cluster, 'streams', 'failover', 'n1', '--yes', '--force', '--if-streams', '0');
  t.is(failover.code, ExitCode.Failed);
  t.regex(failover.stderr, /\(412\)/);
  t.is(cluster.consensus.view().state.stream('events')!.owner, 'n1');
  t.is((await baton(cluster, 'streams', 'transfer', 'events', '--to', 'n2', '--key', 'not a key')).code, ExitCode.Usage);
  t.is((await baton(cluster, 'streams', 'transfer', 'events', '--to', 'n2', '--if-epoch', 'one')).code, ExitCode.Usage);
});
