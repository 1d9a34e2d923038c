import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';

const main = (host: string) => fileURLToPath(new URL(`../../../hosts/${host}/dist/main.js`, import.meta.url));

/** Starts a host process on `config` and resolves with its exit code and stderr. */
async function start(t: import('ava').ExecutionContext, host: string, config: unknown) {
  const dir = await makeTempDir(`${host}-config-errors`);
  t.teardown(() => dir.remove());
  const file = join(dir.path, 'config.json');
  await writeFile(file, JSON.stringify(config), { mode: 0o600 });
  return new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [main(host), file], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

test('a stream node config with errors in several sections reports every one of them at once, each by its path', async (t) => {
  const run = await start(t, 'stream-node', {
    node: { self: 'n1', http: { port: 'x' }, wal: { kind: 'tape' }, tokens: [] },
    dataDir: null,
    consensus: { use: 'raft', options: { member: 5, voters: 'n1' } },
    objectStore: { use: 'fs-object-store', options: { dir: 3 } },
    log: { level: 'loud' },
    colour: 'blue',
  });
  t.is(run.code, 1);
  t.regex(run.stderr, /invalid configuration in \S+config\.json \(7 problems\):/);
  for (const path of ['log.level', 'node.http.port', 'node.wal.kind', 'consensus.options.member', 'consensus.options.voters', 'objectStore.options.dir']) {
    t.regex(run.stderr, new RegExp(`\\n  ${path.replace(/\./g, '\\.')}: `), path);
  }
  t.regex(run.stderr, /colour/, 'the unknown key is named');
  t.notRegex(run.stderr, /\n\s+at /, 'no stack trace');
});

test('an authority node config names an unknown plugin id and the wrong options of the others together', async (t) => {
  const run = await start(t, 'authority-node', {
    node: { self: 'east-1', mode: 'ha', roster: { east: { members: { 'east-1': { public: 'http://127.0.0.1:9' } } } }, public: { port: -1 } },
    dataDir: null,
    auditStore: { use: 'paper' },
    identity: { use: 'identity-npm', options: { legacyNames: 'yes' } },
  });
  t.is(run.code, 1);
  t.regex(run.stderr, /\n {2}node\.public\.port: /);
  t.regex(run.stderr, /\n {2}auditStore\.use: unknown plugin id "paper"; known ids: .*memory-audit-store/);
  t.regex(run.stderr, /\n {2}identity\.options\.legacyNames: /);
});
