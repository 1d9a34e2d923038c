import test from 'ava';
import { contractFetch } from '../../support/api-contract.js';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CorruptRecordError } from '@baton/contracts/internal/errors.js';
import { METRICS } from '@baton/http/internal/metrics.js';
import { FileWal } from '@baton/stream-transfer/internal/file-wal.js';
import { encodeEntries } from '@baton/stream-transfer/internal/wal-codec.js';
import type { WalEntry } from '@baton/stream-transfer/internal/wal.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { streamNodeHostBuilder } from '@baton/host-stream-node/internal/host.js';
import { StreamClient } from '@baton/client';
import { STREAM_NODE } from '@baton/stream-transfer/internal/plugins.js';
import { eventually } from '../eventually.js';

const TOKEN = 'corruption-admin';
const config = (dataDir: string) => ({
  node: { self: 'n1', http: { port: 0 }, wal: { kind: 'file', dir: join(dataDir, 'wal') }, tokens: [{ token: TOKEN, principal: 'ops', scopes: ['admin', 'stream:append', 'stream:read'] }] },
  dataDir,
  log: { level: 'silent' },
});

/** The counter's value for `store` in the host's registry (what /metrics serves). */
async function corruptions(host: ReturnType<ReturnType<typeof streamNodeHostBuilder>['build']>, store: string): Promise<number | undefined> {
  const text = await host.get(METRICS).registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith('baton_storage_corruptions_total{') && l.includes(`store="${store}"`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

test('a stream node does not start on a WAL damaged in the middle, and counts it in baton_storage_corruptions_total', async (t) => {
  const dir = await makeTempDir('node-wal-damage');
  t.teardown(() => dir.remove());
  const walDir = join(dir.path, 'wal');
  const entries: WalEntry[] = [
    { t: 'open', stream: 's', epoch: 1, next: 0, producers: {} },
    { t: 'records', stream: 's', epoch: 1, first: 0, bodies: ['a'] },
    { t: 'records', stream: 's', epoch: 1, first: 1, bodies: ['b'] },
  ];
  const wal = await FileWal.open(walDir);
  await wal.append(entries);
  await wal.close();
  const file = join(walDir, 'streams.wal');
  const bytes = await readFile(file);
  const offset = encodeEntries(entries.slice(0, 1)).length;
  bytes[offset + 25] ^= 0x01;
  await writeFile(file, bytes);

  const host = streamNodeHostBuilder(config(dir.path)).build();
  const error = await t.throwsAsync(host.start(), { instanceOf: CorruptRecordError });
  t.like(error, { store: 'stream-wal', file, offset });
  t.is(await corruptions(host, 'stream-wal'), 1);
  t.deepEqual(await readFile(file), bytes, 'nothing was dropped');
});

test('a stream node does not start on a Raft log damaged in the middle, and counts it', async (t) => {
  const dir = await makeTempDir('node-raft-damage');
  t.teardown(() => dir.remove());
  // A node that ran: its one-voter Raft wrote entries (registration, a stream, appends).
  const first = streamNodeHostBuilder(config(dir.path)).build();
  await first.start();
  const node = first.get(STREAM_NODE);
  const client = new StreamClient({ nodes: [node.url], token: TOKEN, fetch: contractFetch() });
  await eventually(async () => (await client.nodes()).nodes.length === 1, 'registration');
  for (const name of ['one', 'two', 'three']) await client.createStream(name);
  await first.stop();

  const raftDir = join(dir.path, 'raft');
  const [segment] = (await readdir(raftDir)).filter((n) => n.endsWith('.log'));
  const path = join(raftDir, segment);
  const bytes = await readFile(path);
  const at = bytes.indexOf('"two"');
  t.true(at > 0 && at < bytes.length - 200, 'the damage is in the middle of the log');
  bytes[at + 1] ^= 0x01;
  await writeFile(path, bytes);

  const host = streamNodeHostBuilder(config(dir.path)).build();
  const error = await t.throwsAsync(host.start(), { instanceOf: CorruptRecordError });
  t.like(error, { store: 'raft-log', file: path, offset: bytes.lastIndexOf(0x0a, at) + 1 });
  t.regex(error!.message, new RegExp(`baton repair raft ${raftDir}`));
  t.is(await corruptions(host, 'raft-log'), 1);
});
