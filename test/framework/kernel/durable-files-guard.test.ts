import test from 'ava';
import { ESLint } from 'eslint';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: the nearest directory above this (compiled) test holding eslint.config.js. */
function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'eslint.config.js'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('eslint.config.js not found above the test');
    dir = parent;
  }
  return dir;
}

const eslint = new ESLint({ cwd: repositoryRoot() });

/** The messages of the hand-written-files rule for `code`, linted as if it were the file at `path`. */
async function refusals(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(repositoryRoot(), path) });
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

const writes = [
  "import { rename } from 'node:fs/promises';\nexport const r = rename;\n",
  "import { open } from 'node:fs/promises';\nexport const o = open;\n",
  "import { writeFileSync } from 'node:fs';\nexport const w = writeFileSync;\n",
  "import { link } from 'fs/promises';\nexport const l = link;\n",
  "import * as fs from 'node:fs/promises';\nexport const f = fs;\n",
  "import fs from 'node:fs';\nexport const f = fs;\n",
];

test('node:fs writes, renames, links and opens are refused in stores, hosts and the CLI', async (t) => {
  for (const path of ['plugins/fs/new-store.ts', 'framework/stream-transfer/new-wal.ts', 'hosts/stream-node/x.ts', 'cli/commands/x.ts']) {
    for (const code of writes) {
      const found = await refusals(path, code);
      t.is(found.length, 1, `${path}: ${code.split('\n')[0]}`);
      t.regex(found[0]!, /durable-files\.ts/, 'the message says where to write instead');
    }
  }
});

test('reads and type imports of node:fs stay allowed, and the seam itself may write', async (t) => {
  t.deepEqual(
    await refusals('plugins/fs/reader.ts', "import { readFile, readdir, stat, type FileHandle } from 'node:fs/promises';\nexport const r = [readFile, readdir, stat] as unknown as FileHandle;\n"),
    [],
  );
  t.deepEqual(await refusals('framework/kernel/file-system.ts', writes[0]!), []);
  t.deepEqual(await refusals('test/plugins/fs/some.test.ts', writes[0]!), [], 'tests set up their files as they like');
});
