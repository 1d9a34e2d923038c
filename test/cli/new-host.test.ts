import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { spawn } from 'node:child_process';
import { eventually } from '../hosts/eventually.js';
import { BATON_MAIN, runBaton, terminalTyping } from './run-baton.js';
import { filesUnder, workDir } from './temp-project.js';

test('new host with flags composes the chosen plugins into host.ts and the config', async (t) => {
  const cwd = await workDir(t);
  const run = await runBaton(
    [
      'new',
      'host',
      'acme-node',
      '--variant',
      'authority',
      '--audit-store',
      'redis',
      '--identity',
      'npm',
    ],
    { cwd },
  );
  t.is(run.code, ExitCode.Ok, run.stderr);
  const files = await filesUnder(join(cwd, 'acme-node'));
  t.deepEqual(
    [...files.keys()],
    [
      '.gitignore',
      'README.md',
      'config/host.json',
      'package.json',
      'src/config.ts',
      'src/host.ts',
      'src/main.ts',
      'src/start-script.ts',
      'test/host.test.ts',
      'test/support.ts',
      'tsconfig.json',
    ],
  );
  const host = files.get('src/host.ts')!;
  t.regex(host, /import \{ redisAuditStorePlugin \} from '@baton\/plugin-redis';/);
  t.regex(host, /import \{ npmIdentityPlugin \} from '@baton\/plugin-identity';/);
  t.regex(host, /\.add\(redisAuditStorePlugin, config\.auditStore, 'auditStore'\)/);
  t.regex(host, /\.add\(npmIdentityPlugin, config\.identity, 'identity'\)/);
  const config = JSON.parse(files.get('config/host.json')!);
  t.deepEqual(config.auditStore, { url: 'redis://127.0.0.1:6379', keyPrefix: 'baton:' });
  t.deepEqual(config.consensus, { self: 'east-1', dataDir: 'data/consensus' }, 'ownership survives a restart');
  t.is(config.node.tokens.length, 1);
  t.regex(config.node.tokens[0].token, /^[A-Za-z0-9_-]{24}$/, 'a fresh admin token');
  t.regex(files.get('test/host.test.ts')!, /auditStore: \{ url: await redisUrl\(t\) \}/);
  t.regex(
    files.get('package.json')!,
    /"start": "tsc -p tsconfig.json && node dist\/src\/main.js --config config\/host.json"/,
  );
  t.regex(
    run.stdout,
    /Next steps:\n {2}cd acme-node\n {2}npm install\n {2}npm test\n {2}npm start/,
  );
  for (const [path, content] of files) t.notRegex(content, /\{\{|\}\}/, path);
});

test('two generated hosts get different admin tokens', async (t) => {
  const cwd = await workDir(t);
  for (const name of ['one', 'two'])
    await runBaton(['new', 'host', name, '--variant', 'authority'], { cwd });
  const token = async (name: string) =>
    JSON.parse(await readFile(join(cwd, name, 'config/host.json'), 'utf8')).node.tokens[0]
      .token as string;
  t.not(await token('one'), await token('two'));
});

test('without a terminal, choices not given take the defaults, reported in --json', async (t) => {
  const cwd = await workDir(t);
  const run = await runBaton(['new', 'host', 'acme-node', '--variant', 'authority', '--json'], {
    cwd,
  });
  t.is(run.code, ExitCode.Ok, run.stderr);
  const result = JSON.parse(run.stdout);
  t.is(result.variant, 'authority');
  t.deepEqual(result.plugins, { consensus: 'single-member', auditStore: 'fs', identity: 'opaque' });
});

test('on a terminal, the missing choices are asked; given flags are not', async (t) => {
  const cwd = await workDir(t);
  // Asked: variant, then audit store (identity is given; consensus has one choice only).
  const run = await runBaton(['new', 'host', 'acme-node', '--identity', 'pypi'], {
    cwd,
    stdin: terminalTyping(['authority', 'memory']),
  });
  t.is(run.code, ExitCode.Ok, run.stderr);
  t.regex(run.stderr, /variant \[authority\]: /);
  t.regex(run.stderr, /audit store \[fs\]: /);
  t.notRegex(run.stderr, /identity supplier \[/);
  t.notRegex(run.stderr, /ownership consensus \[/);
  const host = (await filesUnder(join(cwd, 'acme-node'))).get('src/host.ts')!;
  t.regex(host, /memoryAuditStorePlugin/);
  t.regex(host, /pypiIdentityPlugin/);
});

test('--yes takes the defaults on a terminal without asking', async (t) => {
  const cwd = await workDir(t);
  const run = await runBaton(['new', 'host', 'acme-node', '--variant', 'authority', '--yes'], {
    cwd,
    stdin: terminalTyping([]),
  });
  t.is(run.code, ExitCode.Ok, run.stderr);
  t.is(run.stderr, '');
});

test('--yes without --variant takes the default variant the prompt shows (authority)', async (t) => {
  const cwd = await workDir(t);
  const run = await runBaton(['new', 'host', 'acme-node', '--yes', '--json'], { cwd, stdin: terminalTyping([]) });
  t.is(run.code, ExitCode.Ok, run.stderr);
  t.like(JSON.parse(run.stdout), { variant: 'authority' });
  const shown = await runBaton(['new', 'host', 'other-node'], { cwd, stdin: terminalTyping(['', '', '', '']) });
  t.regex(shown.stderr, /variant \[authority\]: /, 'the default the prompt shows is the one --yes takes');
});

test('on a real terminal, baton new host exits once its questions are answered, while the terminal stays open', async (t) => {
  t.timeout(120_000);
  const cwd = await workDir(t);
  // script(1) gives the command a pseudo-terminal; the answers are typed into it and the input
  // is left open, as a person's terminal is: the command must not wait for more.
  const child = spawn('script', ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(BATON_MAIN)} new host my-host`, '/dev/null'], {
    cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  t.teardown(() => {
    child.stdin.destroy();
    child.kill();
  });
  await eventually(() => output.includes('variant [authority]:'), 'the first question', 60_000);
  child.stdin.write('\n\n\n\n');
  t.is(await exited, 0, output);
  t.regex(output, /The first "npm test" should pass\./);
  const pkg = JSON.parse(await readFile(join(cwd, 'my-host', 'package.json'), 'utf8'));
  t.is(pkg.name, 'my-host');
});

test('without a terminal the variant must be given', async (t) => {
  const cwd = await workDir(t);
  const run = await runBaton(['new', 'host', 'acme-node'], { cwd });
  t.is(run.code, ExitCode.Usage);
  t.regex(run.stderr, /give the variant with --variant \(authority or stream\), or --yes for the default \(authority\)/);
});

/** `baton ...args` is a usage error whose message matches `message`, and it writes nothing. */
async function refusedAsUsage(t: ExecutionContext, args: string[], message: RegExp): Promise<void> {
  const cwd = await workDir(t);
  const run = await runBaton(args, { cwd });
  t.is(run.code, ExitCode.Usage);
  t.regex(run.stderr, message);
  t.deepEqual([...(await filesUnder(cwd)).keys()], [], 'nothing was written');
}

test('a plugin that is not a choice of the slot, or a slot of another variant, is a usage error', async (t) => {
  await refusedAsUsage(
    t,
    ['new', 'host', 'acme-node', '--variant', 'authority', '--audit-store', 'mongo'],
    /--audit-store "mongo" is not one of the audit store plugins of the authority variant: choose one of fs, memory, redis/,
  );
});

test('new host --variant stream composes a stream node with the chosen object store', async (t) => {
  const cwd = await workDir(t);
  const run = await runBaton(
    ['new', 'host', 'acme-streams', '--variant', 'stream', '--object-store', 'memory', '--json'],
    { cwd },
  );
  t.is(run.code, ExitCode.Ok, run.stderr);
  t.deepEqual(JSON.parse(run.stdout).plugins, {
    consensus: 'raft',
    objectStore: 'memory',
  });
  const files = await filesUnder(join(cwd, 'acme-streams'));
  const host = files.get('src/host.ts')!;
  t.regex(host, /import \{ memoryObjectStorePlugin \} from '@baton\/plugin-memory';/);
  t.regex(host, /import \{ raftConsensusPlugin \} from '@baton\/plugin-raft';/);
  t.regex(host, /\.add\(httpPeerTransportPlugin, config\.peerTransport, 'peerTransport'\)/);
  t.regex(host, /\.add\(memoryObjectStorePlugin, config\.objectStore, 'objectStore'\)/);
  t.regex(host, /\.add\(streamNodePlugin, config\.node, 'node'\)/);
  const config = JSON.parse(files.get('config/host.json')!);
  t.like(config.node, { self: 'n1', http: { port: 7700 }, wal: { kind: 'file', dir: 'data/wal' } });
  t.deepEqual(config.node.tokens[0].scopes, ['admin', 'stream:append', 'stream:read']);
  t.deepEqual(config.consensus, { member: 'n1', voters: ['n1'], dataDir: 'data/raft' });
  t.deepEqual(config.peerTransport, { member: 'n1', peers: {} });
  t.deepEqual(config.objectStore, {});
  t.regex(files.get('test/host.test.ts')!, /import \{ eventually \} from '\.\/support\.js';/);
  t.regex(files.get('README.md')!, new RegExp(`BATON_TOKEN=${config.node.tokens[0].token}`));
  for (const [path, content] of files) t.notRegex(content, /\{\{|\}\}/, path);
});

test('a stream host with the fs object store gives its test a temporary directory', async (t) => {
  const cwd = await workDir(t);
  const run = await runBaton(['new', 'host', 'acme-streams', '--variant', 'stream'], { cwd });
  t.is(run.code, ExitCode.Ok, run.stderr);
  const files = await filesUnder(join(cwd, 'acme-streams'));
  t.deepEqual(JSON.parse(files.get('config/host.json')!).objectStore, { dir: 'data/objects' });
  const generatedTest = files.get('test/host.test.ts')!;
  t.regex(generatedTest, /import \{ eventually, tempDir \} from '\.\/support\.js';/);
  t.regex(generatedTest, /objectStore: \{ dir: await tempDir\(t\) \}/);
});

test('a slot of the other variant is a usage error naming the slots of this one', async (t) => {
  await refusedAsUsage(
    t,
    ['new', 'host', 'acme-streams', '--variant', 'stream', '--audit-store', 'fs'],
    /--audit-store does not apply to the stream variant, which chooses --consensus, --object-store/,
  );
});

test('an invalid host name is a usage error and writes nothing', async (t) => {
  await refusedAsUsage(
    t,
    ['new', 'host', 'Acme Node', '--variant', 'authority'],
    /invalid host name "Acme Node"/,
  );
});
