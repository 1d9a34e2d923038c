import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { memoryAuditStoreSource } from './audit-store-implementation.js';
import { startHostProcesses, type HostProcess } from './host-processes.js';
import { npm, npmInstall } from './npm-client.js';
import { run, type Run } from './processes.js';
import { packWorkspaces, publishTarballs, type PackedPackage } from './publish.js';
import { startLocalRegistry, type LocalRegistry } from './verdaccio.js';
import { wireAuditPlugin } from './wire-audit-plugin.js';
import { CHECKOUT } from './workspaces.js';

/** A step run once, by whichever test needs it first; later callers share its outcome. */
function once<T>(step: () => Promise<T>): () => Promise<T> {
  let result: Promise<T> | undefined;
  return () => (result ??= step());
}

/**
 * The steps the registry tests share, each run once, in a temp dir outside the checkout: the
 * registry with every published package, installs of them, projects the installed `baton`
 * generates, and three processes of the generated host. `close` stops and removes everything.
 */
export function registryStages() {
  const cleanups: (() => Promise<void>)[] = [];

  const root = once(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'baton-registry-'));
    if (!relative(CHECKOUT, dir).startsWith('..'))
      throw new Error(`${dir} is inside the checkout ${CHECKOUT}`);
    // BATON_KEEP_TEST_DIRS=1 keeps the registry, the installs and the projects to look at later.
    if (process.env.BATON_KEEP_TEST_DIRS) console.log(`kept: ${dir}`);
    else cleanups.push(() => rm(dir, { recursive: true, force: true }));
    return dir;
  });

  const subdir = async (name: string) => {
    const dir = join(await root(), name);
    await mkdir(dir, { recursive: true });
    return dir;
  };

  const published = once(
    async (): Promise<{ registry: LocalRegistry; packed: PackedPackage[] }> => {
      const registry = await startLocalRegistry(await subdir('registry'));
      cleanups.push(() => registry.stop());
      const packed = await packWorkspaces(registry, await subdir('tarballs'));
      await publishTarballs(registry, packed);
      return { registry, packed };
    },
  );

  const registry = async () => (await published()).registry;

  /** An empty project that installs `specs` from the registry. */
  const installOf = (name: string, specs: readonly string[]) =>
    once(async () => {
      const dir = await subdir(name);
      const manifest = { name, version: '0.0.0', private: true };
      await writeFile(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
      await npmInstall(await registry(), dir, specs);
      return dir;
    });

  const pluginAuthor = installOf('plugin-author', [
    '@baton/contracts',
    '@baton/kernel',
    '@baton/conformance',
  ]);
  const streamDeployment = installOf('stream-deployment', [
    '@baton/stream-transfer',
    '@baton/plugin-raft',
    '@baton/plugin-fs',
    '@baton/plugin-pino',
    '@baton/kernel',
  ]);
  const everything = installOf('everything', ['@baton/cli']);

  /** The installed `baton`, run through its bin link as a shell runs it, with a config dir of its own. */
  const baton = async (args: readonly string[], env: Record<string, string> = {}): Promise<Run> => {
    const bin = join(await everything(), 'node_modules/.bin/baton');
    return run(bin, args, {
      cwd: await subdir('projects'),
      env: { XDG_CONFIG_HOME: await subdir('user-config'), BATON_URL: '', BATON_TOKEN: '', ...env },
      timeoutMs: 120_000,
    });
  };

  /** `baton new ...args --json` in projects/: the directory it generated. */
  const generate = async (args: readonly string[]): Promise<string> => {
    const generated = await baton([...args, '--json']);
    if (generated.code !== 0) throw new Error(generated.summary);
    return (JSON.parse(generated.stdout) as { dir: string }).dir;
  };

  /** `baton new plugin my-audit --contract audit-store`, its store implemented, installed. */
  const auditPlugin = once(async () => {
    const dir = await generate(['new', 'plugin', 'my-audit', '--contract', 'audit-store']);
    const storeFile = join(dir, 'src/my-audit-store.ts');
    const className = /export class (\w+) implements AuditStore/.exec(
      await readFile(storeFile, 'utf8'),
    )?.[1];
    if (!className) throw new Error(`${storeFile} declares no AuditStore class`);
    await writeFile(storeFile, memoryAuditStoreSource(className));
    await npmInstall(await registry(), dir);
    const pluginFile = join(dir, 'src/plugin.ts');
    const pluginConst = /export const (\w+) = definePlugin\(/.exec(
      await readFile(pluginFile, 'utf8'),
    )?.[1];
    if (!pluginConst) throw new Error(`${pluginFile} defines no plugin`);
    return { dir, className, pluginConst, packageName: 'my-audit' };
  });

  /** The plugin built and packed, as a team hands it to its hosts. */
  const auditPluginTarball = once(async () => {
    const { dir } = await auditPlugin();
    await npm(await registry(), dir, ['run', 'build']);
    const packed = await npm(await registry(), dir, ['pack', '--json']);
    const [entry] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    return { file: join(dir, entry.filename), files: entry.files.map((f) => f.path) };
  });

  /** `baton new host my-node`, the stream variant on Raft and files, installed. */
  const streamHost = once(async () => {
    const dir = await generate([
      'new',
      'host',
      'my-node',
      '--variant',
      'stream',
      '--consensus',
      'raft',
      '--object-store',
      'fs',
    ]);
    await npmInstall(await registry(), dir);
    return dir;
  });

  /** That host with the plugin wired in, rebuilt, run as three processes. */
  const cluster = once(async (): Promise<HostProcess[]> => {
    const plugin = await auditPlugin();
    const tarball = await auditPluginTarball();
    const dir = await streamHost();
    await wireAuditPlugin(dir, plugin);
    await npmInstall(await registry(), dir, [tarball.file]);
    await npm(await registry(), dir, ['run', 'build']);
    const teardown = (stop: () => Promise<void> | void) => void cleanups.push(async () => stop());
    return startHostProcesses({ teardown }, dir, await subdir('cluster'));
  });

  return {
    root,
    published,
    registry,
    pluginAuthor,
    streamDeployment,
    everything,
    baton,
    auditPlugin,
    auditPluginTarball,
    streamHost,
    cluster,
    /** Starts steps later tests need so their installs run side by side; each test awaits its own. */
    startAhead(...steps: (() => Promise<unknown>)[]): void {
      // A failure is reported by the test that awaits the step.
      for (const step of steps) void step().catch(() => undefined);
    },
    /** Stops the processes and the registry, then removes the directory (last made, first undone). */
    async close(): Promise<void> {
      for (const cleanup of cleanups.reverse()) await cleanup();
    },
  };
}
