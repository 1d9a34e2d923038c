import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { authorityClusterVariant } from '@baton/cli/internal/local-cluster/local-authority-cluster.js';
import { streamClusterVariant } from '@baton/cli/internal/local-cluster/local-stream-cluster.js';
import type { ClusterStatus } from '@baton/cluster/internal/schemas.js';
import { startNodeProcesses } from '../framework/cluster/node-processes.js';
import { eventually } from '../hosts/eventually.js';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { closedPort } from './closed-port.js';
import { BATON_MAIN, NO_USER_CONFIG, spawnBaton } from './run-baton.js';

const readyz = async (url: string) => (await fetch(`${url}/readyz`)).status === 200;

async function status(env: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number | null; picture: ClusterStatus; stderr: string }> {
  const run = await spawnBaton(['status', '--json', ...args], { env });
  // Exit 4 (unhealthy) still prints the picture.
  const printed = run.code === ExitCode.Ok || run.code === ExitCode.Unhealthy;
  return { code: run.code, picture: printed ? (JSON.parse(run.stdout) as ClusterStatus) : (undefined as never), stderr: run.stderr };
}

test.serial('baton status on a stream cluster: three members, one leader, indexes and counts; a killed member shows as down', async (t) => {
  const cluster = await startNodeProcesses(t, streamClusterVariant);
  const [n1, , n3] = cluster.nodes;
  await eventually(async () => (await Promise.all(cluster.nodes.map((n) => readyz(n.url)))).every(Boolean), 'every node to be ready', 60_000);
  const env = { BATON_URL: n1.url, BATON_TOKEN: cluster.token };
  // Registration follows readiness: wait until the picture lists the three nodes.
  let healthy!: ClusterStatus;
  await eventually(async () => {
    const run = await status(env);
    healthy = run.picture;
    return run.code === 0 && healthy.counts.nodes === 3 && healthy.members.every((m) => m.reachable && m.report?.ready);
  }, 'the picture to show three ready nodes', 60_000);
  t.is(healthy.variant, 'stream');
  t.is(healthy.servedBy, 'n1');
  t.deepEqual(healthy.members.map((m) => m.id), ['n1', 'n2', 'n3']);
  const leaders = healthy.members.filter((m) => m.report?.role === 'leader');
  t.is(leaders.length, 1);
  t.is(healthy.leader, leaders[0].id);
  for (const m of healthy.members) {
    t.is(m.report!.leader, healthy.leader, `${m.id} follows the leader`);
    t.is(m.report!.term, healthy.term);
    t.true(m.report!.appliedIndex > 0 && m.report!.commitIndex! >= m.report!.appliedIndex);
    t.is(m.address, cluster.nodes.find((n) => n.id === m.id)!.url);
  }
  t.deepEqual(healthy.counts, { nodes: 3, streams: 0 });
  t.is(healthy.transfersInFlight.count, 0);

  const human = await spawnBaton(['status'], { env });
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, new RegExp(`^stream cluster, seen from n1: leader ${healthy.leader}, term \\d+\\n`));
  t.regex(human.stdout, /\nMEMBER +ADDRESS +STATE +ROLE +TERM +COMMIT +APPLIED +LOOP P99 \/ MAX +READY +VERSION\n/);
  // The loop delay reads as the window's p99 and its maximum, each in milliseconds; then the
  // version the member runs. One version everywhere: no warning.
  t.regex(human.stdout, /\nn1 .* \d+\.\d \/ \d+\.\d ms +ready +\d+\.\d+\.\d+\n/);
  t.notRegex(human.stdout, /WARNING/);
  // baton version: this client's, and each member's with its build and Node.js version.
  const version = await spawnBaton(['version', '-o', 'json'], { env });
  t.is(version.code, 0, version.stderr);
  const versions = JSON.parse(version.stdout) as {
    client: { version: string; build: string; nodeVersion: string };
    server: { servedBy: string; mixed: boolean; members: { id: string; version: string; build: string; nodeVersion: string }[] };
  };
  t.is(versions.client.nodeVersion, process.version);
  t.is(versions.server.servedBy, 'n1');
  t.false(versions.server.mixed);
  t.deepEqual(versions.server.members.map((m) => m.id), ['n1', 'n2', 'n3']);
  for (const m of versions.server.members) t.like(m, { version: versions.client.version, build: versions.client.build, nodeVersion: process.version });
  const versionHuman = await spawnBaton(['version'], { env });
  t.regex(versionHuman.stdout, /^client: \d+\.\d+\.\d+ \(build ([0-9a-f]{12}|unknown), node v\d+/);
  t.regex(versionHuman.stdout, /\nMEMBER +VERSION +BUILD +NODE\nn1 +\d+\.\d+\.\d+ /);
  // Beside reachability, the lease verdict the metadata leader published (as /metrics shows it).
  t.true(healthy.members.every((m) => m.liveness === 'Alive'));
  t.regex(human.stdout, /\nn2 +http:\/\/127\.0\.0\.1:\d+ +up \(Alive\) +(leader|follower) /);
  // --url and --token are global: given before the command, with nothing in the environment.
  const global = await spawnBaton(['--url', n1.url, '--token', cluster.token, 'status', '--json']);
  t.is(global.code, 0, global.stderr);
  t.is((JSON.parse(global.stdout) as ClusterStatus).servedBy, 'n1');
  const wrongToken = await spawnBaton(['status'], { env: { ...env, BATON_TOKEN: 'not-the-token' } });
  t.is(wrongToken.code, 1);
  t.regex(wrongToken.stderr, /refused \(401\): the bearer token is not recognised/);

  await cluster.kill(n3.id);
  let degraded!: ClusterStatus;
  await eventually(async () => {
    const run = await status(env);
    degraded = run.picture;
    return run.code === ExitCode.Unhealthy && degraded.members.find((m) => m.id === 'n3')?.reachable === false;
  }, 'the picture to show n3 down', 30_000);
  // A stopped member makes the check fail with its own code, saying which member and why.
  const check = await status(env);
  t.is(check.code, ExitCode.Unhealthy);
  t.like(JSON.parse(check.stderr), { error: { code: 'unhealthy', exitCode: 4 } });
  t.regex(JSON.parse(check.stderr).error.message as string, /n3 is down \(.*connection refused/);
  const down = degraded.members.find((m) => m.id === 'n3')!;
  t.is(down.report, null);
  t.regex(down.error!, /connection refused/);
  t.true(degraded.members.filter((m) => m.id !== 'n3').every((m) => m.reachable));
  const table = await spawnBaton(['status'], { env });
  t.is(table.code, ExitCode.Unhealthy);
  t.regex(table.stderr, /^baton: the cluster is unhealthy: n3 is down/);
  t.regex(table.stdout, /\nn3 +http:\/\/127\.0\.0\.1:\d+ +down \((Alive|Suspect|Dead)\) +- +- +- +- +- +connection refused +-\n/);
  // Silent since it was killed, it is then published Dead.
  await eventually(async () => (await status(env)).picture.members.find((m) => m.id === 'n3')?.liveness === 'Dead', 'n3 to be published Dead', 60_000);

  // --watch prints each refresh when stdout is not a terminal, until stopped (Ctrl-C ends it with 0).
  const watching = spawn(process.execPath, [BATON_MAIN, 'status', '--watch', '100ms'], { env: { ...process.env, ...env, XDG_CONFIG_HOME: NO_USER_CONFIG }, stdio: ['ignore', 'pipe', 'pipe'] });
  let watched = '';
  watching.stdout.setEncoding('utf8').on('data', (chunk: string) => (watched += chunk));
  const watchExit = new Promise<number | null>((resolve) => watching.once('exit', (code) => resolve(code)));
  t.teardown(() => void watching.kill('SIGKILL'));
  await eventually(() => (watched.match(/^--- \d{4}-/gm) ?? []).length >= 2, 'two refreshes of --watch', 30_000);
  t.regex(watched, /UNHEALTHY: .*n3 is down/);
  watching.kill('SIGINT');
  t.is(await watchExit, 0);

  // The first address is down: the next one given answers.
  const fallback = await status({ BATON_TOKEN: cluster.token }, '--url', `${n3.url},${n1.url}`);
  t.is(fallback.code, ExitCode.Unhealthy, fallback.stderr);
  t.is(fallback.picture.servedBy, 'n1');
});

test.serial('baton status on an authority cluster shows the tracker verdict beside each member', async (t) => {
  const cluster = await startNodeProcesses(t, authorityClusterVariant);
  const [east, west] = cluster.nodes;
  await eventually(async () => (await Promise.all(cluster.nodes.map((n) => readyz(n.url)))).every(Boolean), 'every member to be ready', 60_000);
  const env = { BATON_URL: east.url, BATON_TOKEN: cluster.token };
  let picture!: ClusterStatus;
  await eventually(async () => {
    const run = await status(env);
    picture = run.picture;
    return run.code === 0 && picture.members.every((m) => m.reachable && m.report?.ready);
  }, 'every member in the picture ready', 60_000);
  t.is(picture.variant, 'authority');
  t.deepEqual(picture.members.map((m) => [m.id, m.liveness]), [['east-1', 'Alive'], ['north-1', 'Alive'], ['west-1', 'Alive']]);
  t.deepEqual(picture.counts, { authorities: 0 });
  t.is(picture.members.filter((m) => m.report?.role === 'leader').length, 1);
  t.deepEqual(picture.members.map((m) => m.report?.homesCatchingUp), [0, 1, 2].map(() => ({ count: 0, shown: [] })), 'no home catching up');
  // Each member says where its control listener is (the roster lists public addresses only), so
  // every row shows the address --url takes, not only the serving member's.
  for (const m of picture.members) t.is(m.report?.controlAddress, cluster.nodes.find((n) => n.id === m.id)!.url, `${m.id}'s control address`);
  const rows = await spawnBaton(['status'], { env });
  for (const node of cluster.nodes) t.regex(rows.stdout, new RegExp(`\\n${node.id} +http://127\\.0\\.0\\.1:\\d+ +${node.url.replace(/\./g, '\\.')} +up `));

  await cluster.kill(west.id);
  await eventually(async () => {
    const run = await status(env);
    picture = run.picture;
    return run.code === ExitCode.Unhealthy && picture.members.find((m) => m.id === 'west-1')?.reachable === false;
  }, 'west-1 down in the picture', 30_000);
  const human = await spawnBaton(['status'], { env });
  t.is(human.code, ExitCode.Unhealthy);
  t.regex(human.stdout, /\nwest-1 +http:\/\/127\.0\.0\.1:\d+ +- +down \((Alive|Suspect|Dead)\) /);
});

test('baton status names a member catching up as a new home: the authority, the source member, its final and what is held', async (t) => {
  const report = (id: string, homesCatchingUp: unknown) => ({
    id,
    role: id === 'east-1' ? 'leader' : 'follower',
    leader: 'east-1',
    term: 3,
    commitIndex: 40,
    appliedIndex: 40,
    ready: true,
    notReady: null,
    eventLoopDelay: { p99Ms: 1, maxMs: 2 },
    recentTransfers: [],
    homesCatchingUp,
  });
  const picture = {
    variant: 'authority',
    servedBy: 'east-1',
    leader: 'east-1',
    term: 3,
    members: [
      { id: 'east-1', address: 'http://east', reachable: true, liveness: 'Alive', report: report('east-1', { count: 0, shown: [] }), error: null },
      {
        id: 'west-1',
        address: 'http://west',
        reachable: true,
        liveness: 'Alive',
        report: report('west-1', { count: 2, shown: [{ authority: 'proj', epoch: 2, source: 'east-1', incarnation: 'i1', final: 5, held: 3 }] }),
        error: null,
      },
    ],
    counts: { authorities: 2 },
    transfersInFlight: { count: 0, shown: [] },
  };
  // Answers as an authority node's control listener does: 404 on the stream path, the picture on its own.
  const server = createServer((request, response) => {
    const found = request.url === '/availability/v1/cluster';
    response.writeHead(found ? 200 : 404, { 'content-type': found ? 'application/json' : 'application/problem+json' });
    response.end(JSON.stringify(found ? picture : { status: 404, title: 'Not Found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const human = await spawnBaton(['status'], { env: { BATON_URL: url, BATON_TOKEN: 't' } });
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /\nwest-1 is catching up as the new home of 2 authorities \(writes there answer 503 until it holds the finals\):\n {2}proj \(epoch 2\): east-1 final 5, held 3\n {2}\.\.\. and 1 more\n/);
  t.notRegex(human.stdout, /east-1 is catching up/, 'a member with nothing to catch up on says nothing');
});

test('baton status exits 3 naming every address when no member answers', async (t) => {
  const [a, b] = [await closedPort(), await closedPort()];
  const run = await spawnBaton(['status', '--url', `http://127.0.0.1:${a},http://127.0.0.1:${b}`]);
  t.is(run.code, 3);
  t.regex(run.stderr, new RegExp(`cannot reach http://127.0.0.1:${a}, http://127.0.0.1:${b}: no member answered: .*connection refused`));
  const json = await spawnBaton(['status', '--json', '--url', `http://127.0.0.1:${a}`]);
  t.is(json.code, 3);
  t.is(json.stdout, '');
  t.like(JSON.parse(json.stderr), { error: { code: 'unreachable', exitCode: 3 } });
  const usage = await spawnBaton(['status', '--url', 'not a url']);
  t.is(usage.code, 2);
});
