import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { CliContext } from '@baton/cli/internal/context.js';
import { runCli } from '@baton/cli/internal/run.js';
import { findBatonPackage } from '@baton/cli/internal/scaffold/baton-package.js';

/**
 * The config directory a spawned baton gets unless a test gives its own: one that cannot exist
 * (under a file), so no context of the person running the tests is ever read or changed.
 */
export const NO_USER_CONFIG = '/dev/null/baton-cli-tests';

/** The compiled `baton` executable, as package.json "bin" runs it. */
export const BATON_MAIN = fileURLToPath(new URL('../../../cli/dist/main.js', import.meta.url));

export interface BatonRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node cli/dist/main.js ...args` as a user would; stdin is a pipe carrying `stdin` (or nothing). */
export function spawnBaton(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; stdin?: string } = {},
): Promise<BatonRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BATON_MAIN, ...args], {
      cwd: options.cwd,
      env: { ...process.env, BATON_DEBUG: '', BATON_URL: '', BATON_TOKEN: '', XDG_CONFIG_HOME: NO_USER_CONFIG, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // Without input, stdin ends at once: not a terminal, nothing to read.
    child.stdin.end(options.stdin ?? '');
    collectRun(child, resolve, reject);
  });
}

/** Gathers a child's stdout and stderr as text and settles with them and its exit code. */
export function collectRun(child: ChildProcess, resolve: (run: BatonRun) => void, reject: (error: Error) => void): void {
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.on('error', reject);
  child.on('close', (code) => resolve({ code, stdout, stderr }));
}

/** A string sink standing in for stdout or stderr; `isTTY` makes it pass for a terminal. */
export function bufferSink(isTTY?: boolean): {
  write(text: string): boolean;
  text: string;
  isTTY?: boolean;
} {
  return {
    ...(isTTY ? { isTTY } : {}),
    text: '',
    write(text: string) {
      this.text += text;
      return true;
    },
  };
}

/** Runs the CLI in-process (fast), with string sinks and the given working directory and stdin. */
export async function runBaton(
  args: readonly string[],
  options: {
    cwd: string;
    stdin?: CliContext['stdin'];
    env?: NodeJS.ProcessEnv;
    /** Stdout passes for a terminal (progress is drawn as a bar). */
    stdoutIsTTY?: boolean;
  },
): Promise<BatonRun> {
  const stdout = bufferSink(options.stdoutIsTTY);
  const stderr = bufferSink();
  const code = await runCli(args, {
    stdout,
    stderr,
    stdin: options.stdin ?? notATerminal(),
    cwd: options.cwd,
    env: options.env ?? {},
    pkg: findBatonPackage(),
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** Stdin of a script: not a terminal, and already at its end. */
export function notATerminal(): CliContext['stdin'] {
  const stream = new PassThrough();
  stream.end();
  return stream;
}

/** Stdin of a person at a terminal who will type `lines`, one answer each. */
export function terminalTyping(lines: readonly string[]): CliContext['stdin'] {
  const stream = Object.assign(new PassThrough(), { isTTY: true });
  stream.end(lines.map((line) => `${line}\n`).join(''));
  return stream;
}

/** Stdin of a pipe carrying `text` (not a terminal). */
export function pipedInput(text: string): CliContext['stdin'] {
  const stream = new PassThrough();
  stream.end(text);
  return stream;
}
