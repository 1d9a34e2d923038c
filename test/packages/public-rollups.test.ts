import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { run } from './processes.js';
import { CHECKOUT, publishedWorkspaces } from './workspaces.js';

// What a consumer's compiler sees of the packages: each package's types resolve to its public
// rollup (dist/index.public.d.ts, made by the build), where no @internal export is left; only
// the baton-internal condition, which the checkout's own builds set, reaches the full declarations.
// Run after `npm run build`.

const MINUTES = 60_000;

/** A project beside the checkout whose node_modules is the checkout's (the @baton/* workspace links). */
async function consumerProject(
  t: ExecutionContext,
  source: string,
  conditions: string[] = [],
): Promise<{ code: number | null; output: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-consumer-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await symlink(join(CHECKOUT, 'node_modules'), join(dir, 'node_modules'));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module' }));
  await writeFile(join(dir, 'consumer.ts'), source);
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        lib: ['ES2023'],
        types: ['node'],
        experimentalDecorators: true,
        // Every declaration file is checked; an error in a third-party one is left out below.
        skipLibCheck: false,
        noEmit: true,
        customConditions: conditions,
      },
      files: ['consumer.ts'],
    }),
  );
  const compiled = await run(
    process.execPath,
    [join(CHECKOUT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'],
    { cwd: dir, timeoutMs: 4 * MINUTES },
  );
  return { code: compiled.code, output: compiled.stdout + compiled.stderr };
}

const withApi = () =>
  publishedWorkspaces().filter(
    (w) => (w.manifest.exports as Record<string, unknown> | undefined)?.['.'] !== undefined,
  );

test("every package's public rollup compiles in a consumer's strict program, declarations checked", async (t) => {
  t.timeout(5 * MINUTES);
  const packages = withApi();
  const source = packages
    .map((w, i) => `export * as package${i} from '${w.manifest.name}';`)
    .join('\n');
  const compiled = await consumerProject(t, `${source}\n`);
  // An error in a third-party package's declarations is not the rollups' doing.
  const ours = compiled.output
    .split('\n')
    .filter((line) => /error TS/.test(line) && !/node_modules\/(?!@baton\/)/.test(line));
  t.deepEqual(ours, [], compiled.output);
  t.true(packages.length >= 10);
});

test('an @internal export is not importable from a package, except under the baton-internal condition', async (t) => {
  t.timeout(5 * MINUTES);
  // RaftCore is the pure Raft core, @internal in @baton/plugin-raft; raftConsensusPlugin is public.
  const source = `import { RaftCore, raftConsensusPlugin } from '@baton/plugin-raft';\nexport { RaftCore, raftConsensusPlugin };\n`;
  const asConsumer = await consumerProject(t, source);
  t.is(asConsumer.code, 2, asConsumer.output);
  t.regex(asConsumer.output, /has no exported member '?RaftCore'?/);
  t.notRegex(asConsumer.output, /raftConsensusPlugin/);
  const asCheckout = await consumerProject(t, source, ['baton-internal']);
  t.is(asCheckout.code, 0, asCheckout.output);
});
