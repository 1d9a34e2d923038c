import { stat } from 'node:fs/promises';
import test from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { spawnBaton } from './run-baton.js';
import { workDir } from './temp-project.js';
import { startUpOnFreshPorts } from './up-process.js';

const READY = /Ctrl-C stops the cluster/;

interface Listed {
  current: string | null;
  contexts: { name: string; url: string; tokenFile: string; dataDir: string }[];
}

/** The address `baton up` printed for its node `id`. */
function printedUrl(stdout: string, id: string): string {
  const match = new RegExp(`\\n {2}${id} +(http\\S+)`).exec(stdout);
  if (!match) throw new Error(`no address of ${id} in: ${stdout}`);
  return match[1];
}

test.serial('baton up adds its context and makes it current; a second baton up on another data dir adds another; --context switches; the token is read from a 0600 file, never typed', async (t) => {
  const config = await workDir(t);
  const env = { XDG_CONFIG_HOME: config };
  const first = await startUpOnFreshPorts(t, [], READY, env);
  t.regex(first.up.stdout(), /\ncontext: data \(named after the data dir\), now current: baton commands here need no --url or --token/);
  // The restart hint names the data dir it was given, so it resumes this cluster and not the default one.
  t.regex(first.up.stdout(), new RegExp(`"[^"]*(baton|main\\.js) up --data-dir ${first.dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}" again resumes`));
  const second = await startUpOnFreshPorts(t, [], READY, env);
  t.regex(second.up.stdout(), /\ncontext: data-2 \(named after the data dir\), now current/);

  const list = await spawnBaton(['context', 'list', '-o', 'json'], { env });
  t.is(list.code, ExitCode.Ok, list.stderr);
  const listed = JSON.parse(list.stdout) as Listed;
  t.is(listed.current, 'data-2');
  t.deepEqual(listed.contexts.map((c) => [c.name, c.dataDir]), [['data', first.dataDir], ['data-2', second.dataDir]]);
  for (const context of listed.contexts) t.is((await stat(context.tokenFile)).mode & 0o777, 0o600, `${context.tokenFile} is 0600`);
  t.is((await stat(`${config}/baton/config.json`)).mode & 0o777, 0o600);
  const human = await spawnBaton(['context', 'list'], { env });
  t.regex(human.stdout, /^CURRENT +NAME +URL\n +data +http\S+\n\* +data-2 +http\S+\n$/);

  // No --url, no token on the command line or in the environment: the current context answers.
  const nodeIds = async (...args: string[]) => {
    const run = await spawnBaton([...args, 'streams', 'nodes', '-o', 'json'], { env });
    t.is(run.code, ExitCode.Ok, run.stderr);
    return (JSON.parse(run.stdout) as { nodes: { id: string; address: string }[] }).nodes.map((n) => n.address);
  };
  t.true((await nodeIds()).includes(printedUrl(second.up.stdout(), 'n1')), 'the current context is the second cluster');
  t.true((await nodeIds('--context', 'data')).includes(printedUrl(first.up.stdout(), 'n1')), '--context picks the first');
  const use = await spawnBaton(['context', 'use', 'data'], { env });
  t.is(use.code, ExitCode.Ok, use.stderr);
  t.true((await nodeIds()).includes(printedUrl(first.up.stdout(), 'n1')), 'context use switched');
  const status = await spawnBaton(['status', '-o', 'json'], { env });
  t.not(status.code, ExitCode.Unreachable, status.stderr);
  t.like(JSON.parse(status.stdout), { variant: 'stream' });
  const show = await spawnBaton(['context', 'show'], { env });
  t.regex(show.stdout, /^context data \(current\)\n {2}url +http/);

  // The environment comes before the context; the context's token is never sent to another address.
  const elsewhere = await spawnBaton(['streams', 'list'], { env: { ...env, BATON_URL: printedUrl(second.up.stdout(), 'n1') } });
  t.is(elsewhere.code, ExitCode.Failed);
  t.regex(elsewhere.stderr, /refused \(401\)/);
  // --token-file reads the token from a file instead (its first line).
  const fromFile = await spawnBaton(['streams', 'list', '--token-file', listed.contexts[1].tokenFile], { env: { ...env, BATON_URL: printedUrl(second.up.stdout(), 'n1') } });
  t.is(fromFile.code, ExitCode.Ok, fromFile.stderr);
  const unknown = await spawnBaton(['--context', 'nope', 'streams', 'list'], { env });
  t.is(unknown.code, ExitCode.Usage);
  t.regex(unknown.stderr, /--context nope: no such context; the contexts are data, data-2/);
});
