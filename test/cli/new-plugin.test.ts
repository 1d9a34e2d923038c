import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { findBatonPackage } from '@baton/cli/internal/scaffold/baton-package.js';
import { availableContracts } from '@baton/cli/internal/scaffold/plugin-contracts.js';
import { runBaton } from './run-baton.js';
import { filesUnder, workDir } from './temp-project.js';

test('new plugin writes the project into ./NAME and prints the files and next steps', async (t) => {
  const cwd = await workDir(t);
  const run = await runBaton(['new', 'plugin', 'acme', '--contract', 'object-store'], { cwd });
  t.is(run.code, ExitCode.Ok, run.stderr);
  const files = await filesUnder(join(cwd, 'acme'));
  t.deepEqual(
    [...files.keys()],
    [
      '.gitignore',
      'README.md',
      'package.json',
      'src/acme-object-store.ts',
      'src/index.ts',
      'src/options.ts',
      'src/plugin.ts',
      'test/acme-object-store.test.ts',
      'tsconfig.json',
    ],
  );
  t.regex(run.stdout, /Created plugin acme in .*acme \(9 files\)/);
  t.regex(run.stdout, /Next steps:\n {2}cd acme\n {2}npm install\n {2}npm test/);
  t.regex(run.stdout, /should fail until src\/acme-object-store\.ts is implemented/);
  t.regex(
    files.get('src/plugin.ts')!,
    /export const acmeObjectStorePlugin = definePlugin\(\{\n {2}id: 'acme',/,
  );
  t.regex(
    files.get('src/acme-object-store.ts')!,
    /export class AcmeObjectStore implements ObjectStore/,
  );
  t.regex(files.get('README.md')!, /the tests fail until you implement the store/);
});

test('no placeholder is left in any generated file, for every contract and the example', async (t) => {
  const cwd = await workDir(t);
  const variants = [
    ['object-store'],
    ['audit-store'],
    ['identity-supplier'],
    ['identity-supplier', '--example'],
  ];
  for (const [i, [contract, ...flags]] of variants.entries()) {
    const run = await runBaton(['new', 'plugin', `p${i}`, '--contract', contract, ...flags], {
      cwd,
    });
    t.is(run.code, ExitCode.Ok, run.stderr);
    for (const [path, content] of await filesUnder(join(cwd, `p${i}`))) {
      t.notRegex(content, /\{\{|\}\}/, `${contract}${flags.join('')}: ${path}`);
      t.notRegex(path, /\{|\}/);
    }
  }
});

test('the generated package.json depends on the @baton/* packages it imports by a version range, never a path, and asks for the versions Baton uses', async (t) => {
  const cwd = await workDir(t);
  await runBaton(['new', 'plugin', 'acme', '--contract', 'audit-store'], { cwd });
  const text = await readFile(join(cwd, 'acme', 'package.json'), 'utf8');
  const pkg = JSON.parse(text);
  const baton = findBatonPackage();
  t.is(pkg.name, 'acme');
  t.is(pkg.type, 'module');
  const range = `^${baton.version}`;
  // What src/ imports is a dependency; the conformance suite only the tests run is a devDependency.
  t.is(pkg.dependencies['@baton/contracts'], range);
  t.is(pkg.dependencies['@baton/kernel'], range);
  t.is(pkg.devDependencies['@baton/conformance'], range);
  t.is(pkg.dependencies['@baton/conformance'], undefined);
  t.is(pkg.dependencies.baton, undefined);
  t.false(text.includes('file:'), 'no path');
  t.false(text.includes(cwd), 'no absolute path');
  t.is(pkg.dependencies.zod, baton.versionOf('zod'));
  t.is(pkg.devDependencies.typescript, baton.versionOf('typescript'));
  t.is(pkg.devDependencies.ava, baton.versionOf('ava'));
  t.is(pkg.scripts.test, 'tsc -p tsconfig.json && ava');
});

test('--baton and --dir choose the dependency spec and the directory', async (t) => {
  const cwd = await workDir(t);
  const run = await runBaton(
    [
      'new',
      'plugin',
      'acme',
      '--contract',
      'identity-supplier',
      '--dir',
      'plugins/acme',
      '--baton',
      '^0.1.0',
      '--json',
    ],
    { cwd },
  );
  t.is(run.code, ExitCode.Ok, run.stderr);
  const result = JSON.parse(run.stdout);
  t.is(result.dir, join(cwd, 'plugins/acme'));
  t.deepEqual(result.nextSteps, ['cd plugins/acme', 'npm install', 'npm test']);
  const pkg = JSON.parse(await readFile(join(cwd, 'plugins/acme/package.json'), 'utf8'));
  t.is(pkg.dependencies['@baton/plugin-identity'], '^0.1.0');
  t.is(pkg.dependencies['@baton/contracts'], '^0.1.0');
});

test('it refuses to overwrite: one existing file stops the whole generation and stays untouched', async (t) => {
  const cwd = await workDir(t);
  await mkdir(join(cwd, 'acme', 'src'), { recursive: true });
  await writeFile(join(cwd, 'acme', 'src', 'plugin.ts'), 'mine');
  const run = await runBaton(['new', 'plugin', 'acme', '--contract', 'object-store'], { cwd });
  t.is(run.code, ExitCode.Failed);
  t.regex(run.stderr, /refusing to overwrite 1 existing file\(s\) in .*acme: src\/plugin\.ts/);
  const files = await filesUnder(join(cwd, 'acme'));
  t.deepEqual([...files.keys()], ['src/plugin.ts'], 'nothing else was written');
  t.is(files.get('src/plugin.ts'), 'mine');
});

test('generating twice refuses the second time and lists every file that exists', async (t) => {
  const cwd = await workDir(t);
  t.is(
    (await runBaton(['new', 'plugin', 'acme', '--contract', 'object-store'], { cwd })).code,
    ExitCode.Ok,
  );
  const again = await runBaton(['new', 'plugin', 'acme', '--contract', 'object-store'], { cwd });
  t.is(again.code, ExitCode.Failed);
  t.regex(again.stderr, /refusing to overwrite 9 existing file\(s\)/);
});

test('an existing empty directory is fine', async (t) => {
  const cwd = await workDir(t);
  await mkdir(join(cwd, 'acme'));
  t.is(
    (await runBaton(['new', 'plugin', 'acme', '--contract', 'object-store'], { cwd })).code,
    ExitCode.Ok,
  );
});

test('an unknown contract, or --example for a contract without one, is a usage error', async (t) => {
  const cwd = await workDir(t);
  const unknown = await runBaton(['new', 'plugin', 'acme', '--contract', 'blob-store'], { cwd });
  t.is(unknown.code, ExitCode.Usage);
  t.regex(
    unknown.stderr,
    /unknown contract "blob-store": choose one of object-store, audit-store, identity-supplier/,
  );
  const example = await runBaton(
    ['new', 'plugin', 'acme', '--contract', 'object-store', '--example'],
    { cwd },
  );
  t.is(example.code, ExitCode.Usage);
  t.regex(example.stderr, /--example exists for identity-supplier only/);
  t.deepEqual([...(await filesUnder(cwd)).keys()], [], 'nothing was written');
});

test('a contract is offered only when both its template and its conformance suite exist', async (t) => {
  const root = await workDir(t);
  const fake = { ...findBatonPackage(), templates: join(root, 'templates'), conformance: join(root, 'conformance') };
  t.deepEqual(availableContracts(fake), []);
  await mkdir(join(root, 'templates/plugin/files/consensus'), { recursive: true });
  t.deepEqual(availableContracts(fake), [], 'a template without its suite is not offered');
  await mkdir(join(root, 'conformance/dist'), { recursive: true });
  await writeFile(join(root, 'conformance/dist/consensus-suite.js'), '');
  t.deepEqual(
    availableContracts(fake).map((c) => c.name),
    ['consensus'],
  );
  await writeFile(join(root, 'conformance/dist/object-store-suite.js'), '');
  t.deepEqual(
    availableContracts(fake).map((c) => c.name),
    ['consensus'],
    'a suite without its template is not offered either',
  );
});
