import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { processIsAlive } from '@baton/kernel/internal/directory-lock.js';
import { freeLoopbackPorts } from '@baton/cli/internal/local-cluster/free-ports.js';
import { runBaton } from './run-baton.js';
import { eventually } from './stream-cluster.js';
import { workDir } from './temp-project.js';
import { startUp, startUpOnFreshPorts, type UpProcess } from './up-process.js';
import { streamNodeCalls } from './stream-node-calls.js';

const STREAM_MAIN = fileURLToPath(new URL('../../../hosts/stream-node/dist/main.js', import.meta.url));

interface ListedNode {
  id: string;
  state: string;
  pid?: number;
  cause?: string;
}

async function nodeList(cwd: string, dataDir: string): Promise<ListedNode[]> {
  const run = await runBaton(['node', 'list', '--data-dir', dataDir, '--json'], { cwd });
  if (run.code !== 0) throw new Error(`baton node list exited ${run.code}: ${run.stderr}`);
  return (JSON.parse(run.stdout) as { nodes: ListedNode[] }).nodes;
}

async function upWithPids(t: Parameters<typeof startUp>[0]): Promise<{ up: UpProcess; cwd: string; dataDir: string; pids: number[]; token: string; urls: string[] }> {
  const { up, cwd, dataDir } = await startUpOnFreshPorts(t, [], /admin token: \S+/);
  const pids = (await nodeList(cwd, dataDir)).map((n) => n.pid!);
  const token = /admin token: (\S+)/.exec(up.stdout())![1];
  const urls = [...up.stdout().matchAll(/^\s+n[123]\s+(http:\/\/127\.0\.0\.1:\d+)/gm)].map((m) => m[1]);
  return { up, cwd, dataDir, pids, token, urls };
}

for (const signal of ['SIGHUP', 'SIGKILL'] as const) {
  test(`${signal} to baton up leaves no node running`, async (t) => {
    t.timeout(180_000);
    const { up, pids } = await upWithPids(t);
    t.is(pids.length, 3);
    t.true(pids.every(processIsAlive));
    up.child.kill(signal);
    await up.exited;
    for (const pid of pids) await eventually(() => !processIsAlive(pid), `node pid ${pid} to end`, 30_000);
    t.false(pids.some(processIsAlive), 'every node process ended with its baton up');
  });
}

test('kill -9 of one node: baton up keeps running and reports it, the others keep serving, node list shows it down, node start brings it back', async (t) => {
  t.timeout(240_000);
  const { up, cwd, dataDir, pids, token, urls } = await upWithPids(t);
  // Without --tls the control listener stays plain HTTP, as the members' listeners do.
  const control = JSON.parse(await readFile(join(dataDir, 'up.json'), 'utf8')) as { url: string; caFile?: string };
  t.regex(control.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.is(control.caFile, undefined);
  process.kill(pids[2], 'SIGKILL');
  await eventually(() => /node n3 exited \(SIGKILL\)/.test(up.stderr()), 'baton up to report n3');
  t.regex(up.stderr(), /baton node start n3/);
  t.is(up.child.exitCode, null, 'baton up still runs');
  const listed = await nodeList(cwd, dataDir);
  t.deepEqual(
    listed.map((n) => `${n.id} ${n.state}`),
    ['n1 running', 'n2 running', 'n3 exited'],
  );
  // Two voters of three still commit: the others take a create and an append.
  const client = streamNodeCalls(urls[0], token);
  // n3 may have led: the create waits for the survivors to elect a leader (a retry that finds
  // the stream created by an earlier attempt answers 409, which is the same outcome).
  await eventually(async () => {
    try {
      await client.createStream('survives', 'n1');
      return true;
    } catch (error) {
      return (error as { status?: number }).status === 409;
    }
  }, 'a create while n3 is down', 30_000);
  await eventually(async () => {
    try {
      await client.append('survives', ['while n3 is down']);
      return true;
    } catch {
      return false;
    }
  }, 'an append while n3 is down', 30_000);

  const started = await runBaton(['node', 'start', 'n3', '--data-dir', dataDir], { cwd });
  t.is(started.code, 0, started.stderr);
  t.regex(started.stdout, /started n3 \(pid \d+\)/);
  const again = await nodeList(cwd, dataDir);
  t.is(again.find((n) => n.id === 'n3')?.state, 'running');
  const n3 = streamNodeCalls(urls[2], token);
  await eventually(async () => {
    try {
      return (await n3.read('survives')).records.length === 1;
    } catch {
      return false;
    }
  }, 'n3 to serve the record written while it was down', 60_000);

  const stopped = await runBaton(['node', 'stop', 'n2', '--data-dir', dataDir], { cwd });
  t.is(stopped.code, 0, stopped.stderr);
  t.is((await nodeList(cwd, dataDir)).find((n) => n.id === 'n2')?.state, 'stopped');
  t.false(processIsAlive(pids[1]), 'n2 process ended');
  t.notRegex(up.stderr(), /node n2 exited/, 'a requested stop is not reported as a failure');
});

test('a second node process on a data directory in use refuses to start, naming the holder', async (t) => {
  t.timeout(180_000);
  const { dataDir, pids } = await upWithPids(t);
  const second = await runNode([join(dataDir, 'n1', 'config.json')]);
  t.is(second.code, 1);
  t.regex(second.stderr, new RegExp(`data directory .*n1 is in use by another process \\(pid ${pids[0]}`));
  t.true(processIsAlive(pids[0]), 'the holder keeps running');
});

test('baton node without a running baton up says so', async (t) => {
  const cwd = await workDir(t);
  const run = await runBaton(['node', 'list', '--data-dir', join(cwd, 'none')], { cwd });
  t.is(run.code, 1);
  t.regex(run.stderr, /no baton up is running from .*none: start the cluster with "baton up"/);
});

test('a node that cannot start is reported by its cause, not by its log', async (t) => {
  t.timeout(120_000);
  const cwd = await workDir(t);
  const dataDir = join(cwd, 'data');
  // Another process holds n2's port: n2's listener cannot bind it.
  const { base, holder } = await holdSecondPort();
  t.teardown(() => new Promise<void>((resolve) => holder.close(() => resolve())));
  const up = startUp(t, ['--data-dir', dataDir, '--base-port', String(base)]);
  t.is(await up.exited, 1);
  t.regex(up.stderr(), /node n2 exited \(1\) while the cluster was starting: stream node failed to start: .*listener cannot bind 127\.0\.0\.1:\d+/);
  t.notRegex(up.stderr(), /\n\s+at /, 'no stack trace');
  const log = await readFile(join(dataDir, 'n2', 'node.log'), 'utf8');
  t.true(log.includes('cannot bind'), 'the log holds the same cause');
});

test('the host entry points print their usage for --help', async (t) => {
  const help = await runNode(['--help']);
  t.is(help.code, 0);
  t.regex(help.stdout, /^usage: node hosts\/stream-node\/dist\/main\.js CONFIG\.json/);
  t.regex(help.stdout, /docs\/configuration\.md/);
  const bad = await runNode(['--verbose']);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /unknown option --verbose/);
});

/** A base port whose next port this process now listens on (retried until one is free). */
async function holdSecondPort(): Promise<{ base: number; holder: Server }> {
  for (;;) {
    const [base] = await freeLoopbackPorts(1);
    if (base > 65000) continue;
    // The other nodes' Raft traffic to n2 arrives here: turned away at once.
    const holder = createServer((socket) => socket.destroy());
    const held = await new Promise<boolean>((resolve) => {
      holder.once('error', () => resolve(false));
      holder.listen(base + 1, '127.0.0.1', () => resolve(true));
    });
    if (held) return { base, holder };
  }
}

function runNode(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [STREAM_MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
