// Writes the OpenAPI document of every listener of both variants to dist/openapi/, as real
// hosts serve them (a stream node; an authority member's control listener and public server),
// so a linter can read them. Each host runs in memory on loopback port 0 and is stopped at once.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import process from 'node:process';
import { streamNodeHostBuilder } from '@baton/host-stream-node';
import { authorityNodeHostBuilder } from '@baton/host-authority-node';
import { STREAM_NODE } from '@baton/stream-transfer';
import { AUTHORITY_NODE } from '@baton/authority-transfer';

// The directory is the first argument; dist/openapi/ by default.
const out = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'openapi');
const quiet = { level: 'silent' };
// A throwaway token: the documents do not depend on it, and a listener never runs without one.
const tokens = [{ token: 'openapi-writer', principal: 'openapi', scopes: ['admin'] }];

async function documentAt(url) {
  const response = await globalThis.fetch(`${url}/openapi.json`);
  if (response.status !== 200) throw new Error(`${url}/openapi.json answered ${response.status}`);
  return response.json();
}

async function withHost(builder, read) {
  const host = builder.build();
  await host.start();
  try {
    return await read(host);
  } finally {
    await host.stop();
  }
}

const documents = {};
documents['stream-node'] = await withHost(
  streamNodeHostBuilder({
    node: { self: 'n1', http: { port: 0 }, wal: { kind: 'memory' }, tokens },
    dataDir: null,
    objectStore: { use: 'memory-object-store' },
    log: quiet,
  }),
  (host) => documentAt(host.get(STREAM_NODE).url),
);
await withHost(
  authorityNodeHostBuilder({
    node: {
      self: 'east-1',
      mode: 'ha',
      roster: { east: { members: { 'east-1': { public: 'http://127.0.0.1:9' } } } },
      public: { port: 0 },
      control: { port: 0 },
      tokens,
    },
    dataDir: null,
    auditStore: { use: 'memory-audit-store' },
    log: quiet,
  }),
  async (host) => {
    const node = host.get(AUTHORITY_NODE);
    documents['authority-control'] = await documentAt(node.controlAddress.url);
    documents['authority-public'] = await documentAt(node.publicAddress.url);
  },
);

await mkdir(out, { recursive: true });
for (const [name, document] of Object.entries(documents)) {
  const file = join(out, `${name}.json`);
  await writeFile(file, `${JSON.stringify(document, null, 2)}\n`);
  process.stdout.write(`${file}\n`);
}
