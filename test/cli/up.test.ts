import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { processIsAlive } from '@baton/kernel/internal/directory-lock.js';
import { runBaton } from './run-baton.js';
import { eventually } from './stream-cluster.js';
import { workDir } from './temp-project.js';
import { startUp, upAndReady } from './up-process.js';
import { streamNodeCalls } from './stream-node-calls.js';

test('baton up runs three stream nodes, stops on SIGINT keeping the data, and resumes from it', async (t) => {
  t.timeout(240_000);
  const dataDir = join(await workDir(t), 'data');

  const first = startUp(t, ['--data-dir', dataDir]);
  await upAndReady(first, /admin token: \S+/);
  const printed = first.stdout();
  const urls = [...printed.matchAll(/^\s+(n[123])\s+(http:\/\/127\.0\.0\.1:\d+)/gm)].map((m) => ({
    id: m[1],
    url: m[2],
  }));
  t.deepEqual(
    urls.map((u) => u.id),
    ['n1', 'n2', 'n3'],
  );
  const token = /admin token: (\S+)/.exec(printed)![1];
  t.regex(printed, / streams create events/, 'suggests commands to try');
  t.true(printed.includes(`BATON_TOKEN=${token}`));

  // Every node is a voter that sees the others registered; any node takes the create.
  const client = streamNodeCalls(urls[1].url, token);
  t.deepEqual((await client.nodes()).nodes.map((n) => n.id).sort(), ['n1', 'n2', 'n3']);
  const created = await client.createStream('events', 'n3');
  t.is(created.owner, 'n3');
  await eventually(async () => {
    try {
      await client.append('events', ['kept']);
      return true;
    } catch {
      return false; // The owner is still opening the stream.
    }
  }, 'the first append to be accepted');
  t.deepEqual(
    (await client.read('events')).records.map((r) => r.body),
    ['kept'],
  );

  const concurrent = await runBaton(['up', '--data-dir', dataDir], { cwd: dataDir });
  t.is(concurrent.code, 1, 'a second cluster on the same data dir is refused');
  t.regex(concurrent.stderr, /already running from .* \(baton up, pid \d+\)/);

  first.child.kill('SIGINT');
  t.is(await first.exited, 0, `baton up should exit 0 after SIGINT; stderr: ${first.stderr()}`);
  t.regex(first.stderr(), /stopping the nodes/);

  const record = JSON.parse(await readFile(join(dataDir, 'cluster.json'), 'utf8')) as {
    ports: Record<string, number>;
    token: string;
  };
  t.is(record.token, token);

  const second = startUp(t, ['--data-dir', dataDir, '--json']);
  await upAndReady(second, /^\}$/m);
  const resumed = JSON.parse(second.stdout()) as {
    resumed: boolean;
    token: string;
    nodes: { id: string; url: string }[];
  };
  t.true(resumed.resumed);
  t.is(resumed.token, token, 'the admin token is kept across restarts');
  t.deepEqual(
    resumed.nodes.map((n) => n.url),
    urls.map((u) => u.url),
    'the nodes answer at the ports recorded in the data dir',
  );
  const again = streamNodeCalls(resumed.nodes[0].url, token);
  await eventually(
    async () => {
      try {
        return (await again.read('events')).records.length === 1;
      } catch {
        return false; // The owner is still recovering its WAL.
      }
    },
    'the record to be readable after the restart',
    60_000,
  );
  t.deepEqual(
    (await again.read('events')).records.map((r) => r.body),
    ['kept'],
  );

  second.child.kill('SIGTERM');
  t.is(await second.exited, 0, `baton up should exit 0 after SIGTERM; stderr: ${second.stderr()}`);
});

test('Ctrl-C while the nodes start stops them (none is left running) and exits 1', async (t) => {
  t.timeout(120_000);
  const dataDir = join(await workDir(t), 'data');
  const up = startUp(t, ['--data-dir', dataDir]);
  const logs = ['n1', 'n2', 'n3'].map((id) => join(dataDir, id, 'node.log'));
  const pidIn = async (log: string): Promise<number | undefined> => {
    const match = /"pid":(\d+)/.exec(await readFile(log, 'utf8').catch(() => ''));
    return match ? Number(match[1]) : undefined;
  };
  let frozen: number | undefined;
  await eventually(
    async () => (frozen = await pidIn(logs[0])) !== undefined,
    'the first node to start',
    60_000,
  );
  // A frozen node cannot answer, so the cluster cannot become ready before the Ctrl-C lands.
  process.kill(frozen!, 'SIGSTOP');
  up.child.kill('SIGINT');
  // Its answer, once thawed, reaches baton up after the SIGINT did, and the SIGINT wins.
  process.kill(frozen!, 'SIGCONT');
  t.is(await up.exited, 1);
  t.regex(up.stderr(), /interrupted while the cluster was starting/);
  for (const log of logs) {
    const pid = await pidIn(log);
    if (pid !== undefined) await eventually(() => !processIsAlive(pid), `${log}: its node to end`);
  }
});

test('baton up refuses a base port that leaves no room for three nodes', async (t) => {
  const cwd = await workDir(t);
  const run = await runBaton(['up', '--base-port', '65535', '--data-dir', join(cwd, 'data')], {
    cwd,
  });
  t.is(run.code, 2);
  t.regex(run.stderr, /--base-port must be a port number/);
});
