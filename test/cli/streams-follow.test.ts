import { spawn } from 'node:child_process';
import test from 'ava';
import { eventually } from '../hosts/eventually.js';
import { BATON_MAIN } from './run-baton.js';
import { startStreamCluster, STREAM_TOKEN } from './stream-cluster.js';
import { streamNodeCalls } from './stream-node-calls.js';

test('a read with wait is held until a record is durable, and a wait past the bound is refused', async (t) => {
  const cluster = await startStreamCluster(t);
  const client = streamNodeCalls(cluster.url, STREAM_TOKEN);
  await client.createStream('held');
  await cluster.writable('held');
  // Nothing comes: the read answers empty once its wait is over, at the same offset.
  const empty = await client.read('held', 0, 10, 1);
  t.deepEqual([empty.records, empty.next], [[], 0]);
  // A record appended while a read waits is what it answers with.
  const waiting = client.read('held', 0, 10, 10);
  await client.append('held', ['first']);
  const answer = await waiting;
  t.deepEqual(answer.records.map((r) => [r.offset, r.body]), [[0, 'first']]);
  t.is(answer.next, 1);
  const refused = await fetch(`${cluster.url}/v1/streams/held/records?from=0&wait=31`, { headers: { authorization: `Bearer ${STREAM_TOKEN}` } });
  t.is(refused.status, 400);
  t.regex(((await refused.json()) as { detail: string }).detail, /wait must be <= 30/);
});

test('baton streams read --follow prints records as they become durable and stops on Ctrl-C with the offset to resume from', async (t) => {
  const cluster = await startStreamCluster(t);
  const client = streamNodeCalls(cluster.url, STREAM_TOKEN);
  await client.createStream('events');
  await cluster.writable('events');
  await client.append('events', ['before']);
  const child = spawn(process.execPath, [BATON_MAIN, 'streams', 'read', 'events', '--follow'], {
    env: { ...process.env, BATON_DEBUG: '', ...cluster.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(() => void child.kill('SIGKILL'));
  await eventually(() => stdout === '0\tbefore\n', 'the record already there');
  await client.append('events', ['second', 'third']);
  await eventually(() => stdout === '0\tbefore\n1\tsecond\n2\tthird\n', 'the records appended while following');
  await client.append('events', ['fourth']);
  await eventually(() => stdout.endsWith('3\tfourth\n'), 'a later record');
  child.kill('SIGINT');
  t.is(await exited, 0);
  t.regex(stderr, /stopped; next offset: 4 \(baton streams read events --from 4 --follow\)/);
});
