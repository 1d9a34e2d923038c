import test from 'ava';
import { parse as parseYaml } from 'yaml';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { runBaton } from './run-baton.js';
import { startStreamCluster, type StreamCluster } from './stream-cluster.js';

const cwd = process.cwd();

async function baton(cluster: StreamCluster, ...args: string[]) {
  const run = await runBaton(args, { cwd, env: cluster.env });
  return run;
}

async function withStreams(t: Parameters<typeof startStreamCluster>[0]) {
  const cluster = await startStreamCluster(t, ['n1', 'n2']);
  for (const name of ['alpha', 'beta', 'gamma']) {
    const created = await baton(cluster, 'streams', 'create', name, '--owner', name === 'beta' ? 'n2' : 'n1');
    if (created.code !== 0) throw new Error(created.stderr);
  }
  return cluster;
}

test('-o yaml is the same document as -o json and --json, on listings and on show commands', async (t) => {
  const cluster = await withStreams(t);
  for (const command of [['streams', 'list'], ['streams', 'nodes'], ['streams', 'status', 'beta'], ['streams', 'transfers']]) {
    const json = await baton(cluster, ...command, '-o', 'json');
    const alias = await baton(cluster, ...command, '--json');
    const yaml = await baton(cluster, ...command, '-o', 'yaml');
    t.is(yaml.code, ExitCode.Ok, yaml.stderr);
    // Renewal ages change between two reads; everything else is the same document.
    const stable = (doc: unknown) => JSON.parse(JSON.stringify(doc, (key, value: unknown) => (key === 'lastRenewalMsAgo' ? 0 : value))) as unknown;
    const fromJson = JSON.parse(json.stdout) as Record<string, unknown>;
    t.deepEqual(stable(JSON.parse(alias.stdout)), stable(fromJson), `--json is -o json for ${command.join(' ')}`);
    t.deepEqual(stable(parseYaml(yaml.stdout)), stable(fromJson), `yaml parses back to the json of ${command.join(' ')}`);
    t.false(yaml.stdout.trimStart().startsWith('{'), 'it is YAML, not JSON');
  }
  // The long form, given before the command as a global option.
  const long = await baton(cluster, '--output=yaml', 'streams', 'list');
  t.like(parseYaml(long.stdout), { total: 3 });
});

test('-o name prints the names or ids only, one per line', async (t) => {
  const cluster = await withStreams(t);
  const streams = await baton(cluster, 'streams', 'list', '-o', 'name');
  t.is(streams.code, ExitCode.Ok, streams.stderr);
  t.is(streams.stdout, 'alpha\nbeta\ngamma\n');
  const nodes = await baton(cluster, 'streams', 'nodes', '-o', 'name');
  t.is(nodes.stdout, 'n1\nn2\n');
  const one = await baton(cluster, 'streams', 'status', 'beta', '-o', 'name');
  t.is(one.stdout, 'beta\n');
  const none = await baton(cluster, 'streams', 'transfers', '-o', 'name');
  t.is(none.stdout, '', 'no transfers, no lines');
});

test('--no-headers drops the header line (and the summary line of a page); -o wide adds columns', async (t) => {
  const cluster = await withStreams(t);
  const table = await baton(cluster, 'streams', 'list');
  t.regex(table.stdout, /^STREAM +OWNER +EPOCH/);
  t.regex(table.stdout, /\n3 shown of 3 stream\(s\)\n$/);
  const bare = await baton(cluster, 'streams', 'list', '--no-headers');
  t.is(bare.code, ExitCode.Ok, bare.stderr);
  t.deepEqual(bare.stdout.trimEnd().split('\n').map((line) => line.split(/ +/)[0]), ['alpha', 'beta', 'gamma']);
  const nodes = await baton(cluster, '--no-headers', 'streams', 'nodes');
  t.notRegex(nodes.stdout, /NODE|ADDRESS/);
  t.regex(nodes.stdout, /^n1 +http/);
  const wide = await baton(cluster, 'streams', 'nodes', '-o', 'wide');
  t.regex(wide.stdout, /^NODE +ADDRESS +LIVENESS +SLOTS +OWNED +IN +OUT +STATE +LABELS +LAST RENEWAL\n/);
});

test('an unknown -o format is a usage error naming the choices; errors under -o yaml are JSON on stderr', async (t) => {
  const cluster = await withStreams(t);
  const bad = await baton(cluster, 'streams', 'list', '-o', 'xml');
  t.is(bad.code, ExitCode.Usage);
  t.regex(bad.stderr, /-o, --output <format>.*xml.*table, wide, json, yaml, name/);
  const missing = await baton(cluster, 'streams', 'status', 'nope', '-o', 'yaml');
  t.is(missing.code, ExitCode.Failed);
  t.is(missing.stdout, '');
  t.like(JSON.parse(missing.stderr), { error: { exitCode: 1 } });
});
