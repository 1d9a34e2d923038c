import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { eventually } from '../hosts/eventually.js';
import { compilePluginAgainstInstall } from './declarations-only.js';
import { describeFootprint, measureInstall, megabytes } from './footprint.js';
import { CLUSTER_TOKEN } from './host-processes.js';
import { npmRun } from './npm-client.js';
import { publishedVersions } from './publish.js';
import { registryStages } from './registry-stages.js';
import { CHECKOUT, workspaces } from './workspaces.js';

// The packages as a user gets them: every published @baton/* package is packed and published to
// a Verdaccio of this run (third-party packages come from the public registry through it), then
// installed, generated from and run in directories outside the checkout, from that registry only.
// One registry, one npm cache and one install of each kind serve every test of the file, in order.

const MINUTES = 60_000;
const stages = registryStages();
test.after.always(() => stages.close());

test.serial(
  'every published package is in the registry at its version, and the private @baton/testing is not',
  async (t) => {
    t.timeout(6 * MINUTES);
    const { registry, packed } = await stages.published();
    stages.startAhead(
      stages.pluginAuthor,
      stages.streamDeployment,
      stages.everything,
      stages.auditPlugin,
      stages.streamHost,
    );
    const expected = workspaces().filter((w) => !w.manifest.private);
    t.deepEqual(packed.map((p) => p.name).sort(), expected.map((w) => w.manifest.name).sort());
    for (const { manifest } of expected) {
      t.deepEqual(
        await publishedVersions(registry, manifest.name),
        [manifest.version],
        manifest.name,
      );
    }
    t.deepEqual(await publishedVersions(registry, '@baton/testing'), []);
  },
);

test.serial(
  "a plugin author's install (contracts, kernel, conformance) is at most 15 packages, without ava, Baton's part at most 1.5 MB",
  async (t) => {
    t.timeout(6 * MINUTES);
    const footprint = await measureInstall(await stages.pluginAuthor());
    t.log(describeFootprint('plugin author (contracts + kernel + conformance)', footprint));
    t.log(footprint.packages.join(', '));
    t.true(
      footprint.packages.length <= 15,
      `${footprint.packages.length} packages: ${footprint.packages.join(', ')}`,
    );
    t.false(
      footprint.packages.includes('ava'),
      'ava is an optional peer of @baton/conformance: not installed',
    );
    t.deepEqual(footprint.baton.packages, [
      '@baton/conformance',
      '@baton/contracts',
      '@baton/kernel',
    ]);
    t.true(
      footprint.baton.bytes <= 1_500_000,
      `Baton's part is ${megabytes(footprint.baton.bytes)}`,
    );
  },
);

test.serial(
  "a plugin file compiles (strict, NodeNext) against the installed packages' declarations, no Baton source in the program",
  async (t) => {
    t.timeout(6 * MINUTES);
    const project = await stages.pluginAuthor();
    const compiled = await compilePluginAgainstInstall(project);
    t.is(compiled.code, 0, compiled.summary);
    const baton = compiled.files.filter((file) => file.includes('/@baton/'));
    t.true(baton.length > 0, 'the program reads Baton through the installed packages');
    for (const file of baton) {
      t.true(
        file.startsWith(join(project, 'node_modules/@baton/')),
        `${file} is an installed package's`,
      );
      t.regex(file, /\.d\.ts$/, `${file} is a declaration`);
    }
    const plugin = join(project, 'plugin.ts');
    const sources = compiled.files.filter(
      (file) => /(?<!\.d)\.[cm]?ts$/.test(file) && file !== plugin,
    );
    t.deepEqual(sources, [], 'no .ts source besides the plugin itself');
    const ownTree = compiled.files.filter(
      (file) => file.startsWith(CHECKOUT) && !file.startsWith(join(CHECKOUT, 'node_modules/')),
    );
    t.deepEqual(ownTree, [], "nothing of the checkout's own tree");
  },
);

test.serial(
  'a stream deployment on raft + fs installs no etcd, S3 or Redis client; the CLI brings both hosts',
  async (t) => {
    t.timeout(6 * MINUTES);
    const installs = await Promise.all([
      stages.pluginAuthor(),
      stages.streamDeployment(),
      stages.everything(),
    ]);
    const [author, stream, all] = await Promise.all(installs.map(measureInstall));
    t.log(describeFootprint('(a) plugin author: contracts + kernel + conformance', author));
    t.log(
      describeFootprint(
        '(b) stream deployment: stream-transfer + plugin-raft + plugin-fs + plugin-pino + kernel',
        stream,
      ),
    );
    t.log(describeFootprint('(c) everything: @baton/cli', all));
    for (const client of [
      'etcd3',
      'minio',
      'ioredis',
      '@baton/plugin-etcd',
      '@baton/plugin-minio',
      '@baton/plugin-redis',
    ]) {
      t.false(
        stream.packages.includes(client),
        `${client} is not part of a raft + fs stream deployment`,
      );
    }
    t.true(all.packages.includes('@baton/host-stream-node'));
    t.true(all.packages.includes('@baton/host-authority-node'));
    t.true(
      all.packages.includes('@baton/templates'),
      '@baton/cli generates projects from @baton/templates',
    );
  },
);

test.serial(
  'the installed baton generates an audit-store plugin that installs from the registry and, implemented, passes its conformance suite',
  async (t) => {
    t.timeout(8 * MINUTES);
    const { dir } = await stages.auditPlugin();
    const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
    t.is(manifest.dependencies['@baton/kernel'], '^0.1.0');
    t.is(manifest.devDependencies['@baton/conformance'], '^0.1.0');
    const tested = await npmRun(await stages.registry(), dir, ['test']);
    t.is(tested.code, 0, tested.summary);
    t.regex(tested.stdout, /✔ my-audit › put creates a record once/);
    t.regex(tested.stdout, /✔ my-audit › concurrent puts of one identity/);
    t.regex(tested.stdout, /\d+ tests passed/);
    t.notRegex(tested.stdout, /failed/);
  },
);

test.serial(
  'the installed baton generates a stream host on raft + fs that installs from the registry, without etcd or S3 clients, and passes its own tests',
  async (t) => {
    t.timeout(8 * MINUTES);
    const dir = await stages.streamHost();
    const installed = await measureInstall(dir);
    t.log(describeFootprint('generated stream host (raft + fs, with its dev tools)', installed));
    for (const name of ['etcd3', 'minio', '@baton/host-stream-node'])
      t.false(installed.packages.includes(name), name);
    const tested = await npmRun(await stages.registry(), dir, ['test']);
    t.is(tested.code, 0, tested.summary);
    t.regex(
      tested.stdout,
      /✔ the host starts on a free port, registers itself, serves streams, and stops/,
    );
    t.regex(tested.stdout, /3 tests passed/);
  },
);

test.serial(
  'the generated plugin packs with its declarations and without its tests, as a host installs it',
  async (t) => {
    t.timeout(8 * MINUTES);
    const { files } = await stages.auditPluginTarball();
    t.true(files.includes('dist/src/index.d.ts'), 'its declarations');
    t.true(files.includes('dist/src/index.js'));
    t.false(
      files.some((file) => file.startsWith('dist/test/')),
      'not its tests',
    );
  },
);

test.serial(
  'three processes of that host with the plugin wired in run Raft over HTTP, and a stream moves from one to another',
  async (t) => {
    t.timeout(8 * MINUTES);
    const nodes = await stages.cluster();
    const { className } = await stages.auditPlugin();
    // Each host resolved the plugin's store: every member projects the audit trail into it.
    for (const node of nodes)
      t.regex(node.running, new RegExp(`audit store ${className}$`), node.id);

    const [n1, n2] = nodes;
    await eventually(
      async () => {
        const answer = await fetch(`${n1.url}/v1/admin/nodes`, {
          headers: { authorization: `Bearer ${CLUSTER_TOKEN}` },
        });
        return answer.ok && ((await answer.json()) as { nodes: unknown[] }).nodes.length === 3;
      },
      'the three nodes to register through Raft',
      60_000,
    );
    const atN1 = { BATON_URL: n1.url, BATON_TOKEN: CLUSTER_TOKEN };
    const atN2 = { ...atN1, BATON_URL: n2.url };
    const step = async (args: string[], expected: RegExp, env: Record<string, string>) => {
      const answer = await stages.baton(args, env);
      t.is(answer.code, 0, answer.summary);
      t.regex(answer.stdout, expected, args.join(' '));
    };
    await step(
      ['streams', 'create', 'orders', '--owner', 'n1'],
      /created stream orders on n1 \(epoch 1\)/,
      atN1,
    );
    await step(
      ['streams', 'append', 'orders', 'first record', 'second record'],
      /appended 2 records to orders: offsets 0-1 \(epoch 1 on n1\)/,
      atN1,
    );
    await step(
      ['streams', 'transfer', 'orders', '--to', 'n2'],
      /moved orders from n1 to n2: open at epoch 2/,
      atN1,
    );
    await step(
      ['streams', 'append', 'orders', 'third record'],
      /appended 1 record to orders: offset 2 \(epoch 2 on n2\)/,
      atN2,
    );
    await step(
      ['streams', 'read', 'orders'],
      /^0\tfirst record\n1\tsecond record\n2\tthird record\n$/,
      atN2,
    );
    // The stream's records, read back from the plugin's store on n2 (each member keeps its copy).
    let kinds: string[] = [];
    await eventually(
      async () => {
        const answer = await fetch(`${n2.url}/v1/admin/audit?subject=orders`, {
          headers: { authorization: `Bearer ${CLUSTER_TOKEN}` },
        });
        if (!answer.ok) return false;
        kinds = ((await answer.json()) as { records: Array<{ kind: string }> }).records.map((r) => r.kind);
        return ['stream_created', 'transfer_proposed', 'transfer_completed'].every((kind) => kinds.includes(kind));
      },
      "the transfer's audit records in n2's store",
      60_000,
    );
    t.deepEqual(kinds, ['transfer_completed', 'transfer_proposed', 'stream_created'], 'newest first');
  },
);

test.serial(
  'a member installed from the registry serves the dashboard bundle and reports the build it was packed from',
  async (t) => {
    t.timeout(8 * MINUTES);
    const [n1] = await stages.cluster();
    const dashboard = await fetch(`${n1.url}/ui/`);
    t.is(dashboard.status, 200, 'the bundle ships in @baton/dashboard');
    t.regex(await dashboard.text(), /<html/i);
    // The build record @baton/http reads beside its code (npm run build writes it).
    const record = await readFile(join(CHECKOUT, 'framework/http/dist/build-info.json'), 'utf8');
    const { build } = JSON.parse(record) as { build: string };
    const metrics = await (await fetch(`${n1.url}/metrics`)).text();
    const buildLine =
      metrics.split('\n').find((line) => line.startsWith('baton_build_info{')) ?? '(none)';
    t.true(buildLine.includes(`build="${build}"`), buildLine);
  },
);
