import { spawn } from 'node:child_process';
import { dirname } from 'node:path';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** What a failure message shows: the command, its exit, and the tail of its output. */
  summary: string;
}

export interface RunOptions {
  cwd: string;
  env?: Record<string, string>;
  /** The process is killed after this long (it is a bound on a hang, not an expectation). */
  timeoutMs?: number;
}

/**
 * The environment a child gets: this one without what npm and ava set for the test run itself
 * (npm_* config, the baton-internal condition in NODE_OPTIONS), as a user's shell would be, with
 * this Node first on PATH so `#!/usr/bin/env node` bins and npm scripts run it.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) || key === 'NODE_OPTIONS' || key === 'INIT_CWD') continue;
    env[key] = value;
  }
  return {
    ...env,
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    CI: '1',
    FORCE_COLOR: '0',
    NO_COLOR: '1',
    ...extra,
  };
}

/** Runs a command to its end and gathers its output; never rejects for a non-zero exit. */
export function run(command: string, args: readonly string[], options: RunOptions): Promise<Run> {
  const timeoutMs = options.timeoutMs ?? 300_000;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: cleanEnv(options.env),
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const ended = signal
        ? `killed by ${signal}${signal === 'SIGKILL' ? ` (over ${timeoutMs} ms)` : ''}`
        : `exited ${code}`;
      const tail = (text: string) => text.split('\n').slice(-60).join('\n');
      resolve({
        code,
        stdout,
        stderr,
        summary: `${command} ${args.join(' ')} (in ${options.cwd}) ${ended}\n--- stdout\n${tail(stdout)}\n--- stderr\n${tail(stderr)}`,
      });
    });
  });
}

/** Runs a command and throws its summary unless it exits 0. */
export async function mustRun(
  command: string,
  args: readonly string[],
  options: RunOptions,
): Promise<Run> {
  const result = await run(command, args, options);
  if (result.code !== 0) throw new Error(result.summary);
  return result;
}
