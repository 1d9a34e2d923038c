import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { BATON_MAIN } from './run-baton.js';
import { eventually } from './stream-cluster.js';
import { workDir } from './temp-project.js';

export interface UpProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/**
 * `baton up ...args` as a user runs it (in `cwd`, where its default data dir is), stopped with
 * SIGTERM after the test if it still runs.
 */
export function startUp(t: ExecutionContext, args: readonly string[], cwd?: string, env: NodeJS.ProcessEnv = {}): UpProcess {
  // The context baton up saves goes to a directory of the test's (XDG_CONFIG_HOME), never the user's.
  const config = env.XDG_CONFIG_HOME ?? mkdtempSync(join(tmpdir(), 'baton-config-'));
  if (env.XDG_CONFIG_HOME === undefined) t.teardown(() => rm(config, { recursive: true, force: true }));
  const child = spawn(process.execPath, [BATON_MAIN, 'up', ...args], {
    cwd,
    env: { ...process.env, BATON_DEBUG: '', BATON_URL: '', BATON_TOKEN: '', XDG_CONFIG_HOME: config, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Waits until stdout matches `marker` (the cluster is up once its endpoints are printed). */
export async function upAndReady(up: UpProcess, marker: RegExp): Promise<void> {
  await eventually(
    () => {
      if (up.child.exitCode !== null)
        throw new Error(`baton up exited early (${up.child.exitCode}): ${up.stderr()}`);
      return marker.test(up.stdout());
    },
    'baton up to print its endpoints',
    90_000,
  );
}

/**
 * `baton up --data-dir <fresh dir>/data ...args`, ready once stdout matches `marker`. baton up
 * picks free ports and its nodes bind them a moment later: on a busy machine a server another
 * test starts can take one in between. That is not what these tests are about, so once, a
 * fresh cluster on fresh ports.
 */
export async function startUpOnFreshPorts(
  t: ExecutionContext,
  args: readonly string[],
  marker: RegExp,
  env: NodeJS.ProcessEnv = {},
): Promise<{ up: UpProcess; cwd: string; dataDir: string }> {
  const attempt = async () => {
    const cwd = await workDir(t);
    const dataDir = join(cwd, 'data');
    const up = startUp(t, ['--data-dir', dataDir, ...args], undefined, env);
    await upAndReady(up, marker);
    return { up, cwd, dataDir };
  };
  try {
    return await attempt();
  } catch (error) {
    if (!/another process holds it/.test(String(error))) throw error;
    t.log(`retried on fresh ports: ${String(error)}`);
    return attempt();
  }
}

/** The commands under "Try:" that baton up printed, without comments and curl. */
export function printedBatonCommands(stdout: string): string[] {
  const after = stdout.split('\nTry:\n')[1] ?? '';
  const block = after.split('\n\n')[0];
  return block
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => asBaton(line) !== undefined || line.startsWith('export '));
}

/**
 * A printed command as `baton ...`, whichever way it was printed to run this CLI (`baton`,
 * `npx baton`, or node with the entry point); undefined for any other line.
 */
export function asBaton(line: string): string | undefined {
  const match = /^(?:baton|npx baton|node \S+\/cli\/dist\/main\.js)( .*)$/.exec(line);
  return match ? `baton${match[1]}` : undefined;
}
