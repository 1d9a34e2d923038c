import { spawn } from 'node:child_process';
import test, { type ExecutionContext } from 'ava';
import { generateProject, runTool, type ProcessResult } from './generated-project.js';

// The host template, generated into a temp dir, built with tsc and tested with ava as its
// README says: the generated test starts the host and must pass, and so must the start script.
// Serial: several builds at once starve a small machine.

interface StartOutcome {
  /** The API address the start script printed (control API or stream API), if it got that far. */
  control?: string;
  stdout: string;
  stderr: string;
  exited: Promise<number | null>;
  stop(signal: NodeJS.Signals): void;
}

/** Runs the generated start script (what `npm start` runs after building) until it says it runs or exits. */
async function startScript(dir: string, env: Record<string, string>): Promise<StartOutcome> {
  const child = spawn(process.execPath, ['dist/src/main.js', '--config', 'config/host.json'], {
    cwd: dir,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const outcome = {
    stdout: '',
    stderr: '',
    exited: new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code))),
    stop: (signal: NodeJS.Signals) => void child.kill(signal),
  } as StartOutcome;
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (outcome.stderr += chunk));
  await new Promise<void>((resolve) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      outcome.stdout += chunk;
      const match = /(?:control|stream) API (http:\/\/127\.0\.0\.1:\d+)/.exec(outcome.stdout);
      if (match) {
        outcome.control = match[1];
        resolve();
      }
    });
    void outcome.exited.then(() => resolve());
  });
  return outcome;
}

/**
 * Runs the start script on free ports (`env`), checks that `apiPath` answers and wants a token,
 * then that SIGINT stops the host with exit 0, saying so.
 */
async function startScriptServesAndStops(
  t: ExecutionContext,
  dir: string,
  name: string,
  env: Record<string, string>,
  apiPath: string,
): Promise<void> {
  const running = await startScript(dir, env);
  t.teardown(() => running.stop('SIGKILL'));
  t.truthy(
    running.control,
    `the host did not report running:\n${running.stdout}\n${running.stderr}`,
  );
  const answer = await fetch(`${running.control}${apiPath}`);
  t.is(answer.status, 401, 'the API answers, and wants a token');
  running.stop('SIGINT');
  t.is(await running.exited, 0, running.stderr);
  t.regex(running.stdout, new RegExp(`SIGINT: stopping ${name}`));
}

/** Generates a host with `baton new host ...args`, builds it and runs its tests, which must pass. */
async function generatedHostPasses(
  t: ExecutionContext,
  args: readonly string[],
): Promise<{ dir: string; output: string }> {
  const project = await generateProject(t, ['new', 'host', ...args]);
  const build = await runTool(project.dir, 'tsc');
  t.is(build.code, 0, `tsc failed:\n${build.output}`);
  const tests = await runTool(project.dir, 'ava');
  t.is(tests.code, 0, `ava failed:\n${tests.output}`);
  t.regex(tests.output, /3 tests passed/);
  return { dir: project.dir, output: tests.output };
}

// One default host, generated and built once, serves the first three tests, so that no single
// step comes near the test timeout on a busy machine.
const cleanups: (() => Promise<void> | void)[] = [];
let defaultHost: { dir: string; build: ProcessResult };

test.before(async () => {
  const project = await generateProject({ teardown: (fn) => cleanups.push(fn) }, [
    'new',
    'host',
    'acme-node',
    '--variant',
    'authority',
  ]);
  defaultHost = { dir: project.dir, build: await runTool(project.dir, 'tsc') };
});

test.after.always(async () => {
  for (const cleanup of cleanups) await cleanup();
});

test.serial(
  'the authority host template with the default plugins compiles and passes its own test',
  async (t) => {
    t.is(defaultHost.build.code, 0, `tsc failed:\n${defaultHost.build.output}`);
    const tests = await runTool(defaultHost.dir, 'ava');
    t.is(tests.code, 0, `ava failed:\n${tests.output}`);
    t.regex(tests.output, /✔ the host starts on free ports, answers its control API, and stops/);
    t.regex(tests.output, /3 tests passed/);
  },
);

test.serial(
  'the generated start script runs the host from its config and stops it cleanly on SIGINT',
  async (t) => {
    t.is(defaultHost.build.code, 0, 'the build failed (see the first test)');
    // Free ports instead of the config's fixed ones, through the documented overrides.
    const env = {
      BATON__node__public__port: '0',
      BATON__node__control__port: '0',
      BATON__log__level: 'silent',
    };
    await startScriptServesAndStops(
      t,
      defaultHost.dir,
      'acme-node',
      env,
      '/availability/v1/members',
    );
  },
);

test.serial(
  'the generated start script refuses a broken config with the path at fault and exit 1',
  async (t) => {
    t.is(defaultHost.build.code, 0, 'the build failed (see the first test)');
    const broken = await startScript(defaultHost.dir, { BATON__auditStore__dir: '' });
    t.is(await broken.exited, 1);
    t.is(broken.control, undefined);
    t.regex(broken.stderr, /acme-node cannot start: .*auditStore/s);
    t.notRegex(broken.stderr, /\n\s+at /, 'no stack trace');
  },
);

test.serial(
  'the authority host template with Redis and npm identities compiles and passes its test against a real Redis',
  async (t) => {
    await generatedHostPasses(t, [
      'acme-node',
      '--variant',
      'authority',
      '--audit-store',
      'redis',
      '--identity',
      'npm',
    ]);
  },
);

test.serial(
  'the stream host template with the default plugins compiles, passes its own test, and its start script serves streams',
  async (t) => {
    const { dir, output } = await generatedHostPasses(t, ['acme-streams', '--variant', 'stream']);
    t.regex(
      output,
      /✔ the host starts on a free port, registers itself, serves streams, and stops/,
    );
    // The start script, on a free port and with its data in the project directory.
    const env = { BATON__node__http__port: '0', BATON__log__level: 'silent' };
    await startScriptServesAndStops(t, dir, 'acme-streams', env, '/v1/admin/nodes');
  },
);

test.serial(
  'the stream host template with the memory object store compiles and passes its test',
  async (t) => {
    await generatedHostPasses(t, [
      'acme-streams',
      '--variant',
      'stream',
      '--object-store',
      'memory',
    ]);
  },
);
