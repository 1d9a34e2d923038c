import { readFile } from 'node:fs/promises';
import test from 'ava';
import { z } from 'zod';
import { keyTable } from '@baton/kernel/internal/config-reference.js';
import { CONFIG_REFERENCE, configReference } from '@baton/cli/internal/config-reference.js';

test('docs/configuration.md is what the schemas generate now (run "npm run config-reference" after changing one)', async (t) => {
  const committed = await readFile(CONFIG_REFERENCE, 'utf8');
  t.is(committed, configReference(), 'docs/configuration.md drifted from the schemas: run "npm run config-reference"');
});

test('the reference names every key of both hosts, the node sections and each plugin of their catalogs', (t) => {
  const reference = configReference();
  for (const heading of ['## Stream node', '## Authority node', '### `node`', '### `raft`', '### `fs-audit-store`', '### `identity-npm`', '### `s3-object-store`']) {
    t.true(reference.includes(heading), heading);
  }
  for (const key of ['`dataDir`', '`node.http.port`', '`node.roster`', '`node.wal.kind`', '`options.voters`', '`log.level`']) {
    t.true(reference.includes(`| ${key} |`), key);
  }
});

test('a key table walks nested objects, arrays and union variants, with types, defaults and required keys', (t) => {
  const schema = z
    .object({
      port: z.number().int().min(0).max(65535).default(80).describe('where it listens'),
      tokens: z.array(z.object({ token: z.string().min(1) })).default([]),
      store: z.discriminatedUnion('kind', [
        z.object({ kind: z.literal('file'), dir: z.string() }),
        z.object({ kind: z.literal('memory') }),
      ]),
    })
    .strict();
  t.deepEqual(keyTable(schema, 'x'), [
    '| Key | Type | Default | Description |',
    '| --- | --- | --- | --- |',
    '| `x.port` | integer (>= 0, <= 65535) | `80` | where it listens |',
    '| `x.tokens` | object[] | `[]` |  |',
    '| `x.tokens[].token` | string (length >= 1) |  | **required** |',
    '| `x.store` | object |  | **required** |',
    '| `x.store.kind` | "file" \\| "memory" |  | which variant the keys below follow |',
    '| `x.store.dir` | string |  | (when `kind` is `"file"`) **required** |',
  ]);
});
