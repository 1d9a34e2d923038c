import test from 'ava';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError, loadConfig } from '@baton/kernel/internal/index.js';

const schema = z.object({
  node: z.object({ id: z.string().min(1) }),
  http: z.object({ port: z.number().int().min(0).max(65535).default(8080) }).default({ port: 8080 }),
  peers: z.array(z.object({ id: z.string(), address: z.string() })).default([]),
});

async function file(contents: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-config-'));
  const path = join(dir, 'config.json');
  await writeFile(path, contents);
  return path;
}

test('loads a JSON file and applies schema defaults', async (t) => {
  const config = await loadConfig(schema, { file: await file('{"node":{"id":"n1"}}'), env: {} });
  t.deepEqual(config, { node: { id: 'n1' }, http: { port: 8080 }, peers: [] });
});

test('environment variables override values by path, parsed as JSON when they parse', async (t) => {
  const config = await loadConfig(schema, {
    file: await file('{"node":{"id":"n1"},"peers":[{"id":"a","address":"x"}]}'),
    env: { BATON__http__port: '9090', BATON__node__id: 'n2', BATON__peers__0__address: 'y', OTHER: '1' },
  });
  t.is(config.http.port, 9090);
  t.is(config.node.id, 'n2');
  t.is(config.peers[0].address, 'y');
});

test('invalid values fail with the config path of each issue', async (t) => {
  const error = await t.throwsAsync(
    loadConfig(schema, { file: await file('{"node":{"id":""},"http":{"port":"eighty"}}'), env: {} }),
    { instanceOf: ConfigError },
  );
  t.regex(error!.message, /node\.id/);
  t.regex(error!.message, /http\.port/);
  t.deepEqual(
    error!.issues.map((i) => i.path).sort(),
    ['http.port', 'node.id'],
  );
});

test('a missing file and malformed JSON are reported with the file name', async (t) => {
  await t.throwsAsync(loadConfig(schema, { file: '/nonexistent/baton.json', env: {} }), {
    instanceOf: ConfigError,
    message: /cannot read config file \/nonexistent\/baton\.json/,
  });
  const bad = await file('{"node":');
  await t.throwsAsync(loadConfig(schema, { file: bad, env: {} }), {
    instanceOf: ConfigError,
    message: /is not valid JSON/,
  });
});

test('an override that reaches inside a scalar is refused', async (t) => {
  await t.throwsAsync(
    loadConfig(schema, { file: await file('{"node":{"id":"n1"}}'), env: { BATON__node__id__x: '1' } }),
    { instanceOf: ConfigError, message: /BATON__node__id__x/ },
  );
});
