import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';
import { CHECKOUT } from '../../packages/workspaces.js';

test('the generated client types are those of the documents the listeners serve today (npm run client-types)', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'baton-openapi-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await promisify(execFile)(process.execPath, [join(CHECKOUT, 'scripts', 'write-openapi.mjs'), dir], { cwd: CHECKOUT });
  const { CLIENT_DOCUMENTS, clientTypes } = (await import(pathToFileURL(join(CHECKOUT, 'scripts', 'client-types.mjs')).href)) as {
    CLIENT_DOCUMENTS: string[];
    clientTypes: (dir: string, name: string) => Promise<string>;
  };
  t.deepEqual(CLIENT_DOCUMENTS, ['stream-node', 'authority-control', 'authority-public']);
  for (const name of CLIENT_DOCUMENTS) {
    const committed = await readFile(join(CHECKOUT, 'framework', 'client', 'generated', `${name}.ts`), 'utf8');
    t.true(committed === (await clientTypes(dir, name)), `framework/client/generated/${name}.ts is stale: run npm run client-types`);
  }
});
