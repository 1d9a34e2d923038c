import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { CliContext } from '../../cli/context.js';
import { runCli } from '../../cli/run.js';
import { findBatonPackage } from '../../cli/scaffold/baton-package.js';

/** The compiled `baton` executable, as package.json "bin" runs it. */
export const BATON_MAIN = fileURLToPath(new URL('../../cli/main.js', import.meta.url));

export interface BatonRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/cli/main.js ...args` as a user would, with stdin closed (not a terminal). */
export function spawnBaton(
  args: readonly string[],
  options: { cwd?: string } = {},
): Promise<BatonRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BATON_MAIN, ...args], {
      cwd: options.cwd,
      env: { ...process.env, BATON_DEBUG: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A string sink standing in for stdout or stderr. */
export function bufferSink(): { write(text: string): boolean; text: string } {
  return {
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
  options: { cwd: string; stdin?: CliContext['stdin'] },
): Promise<BatonRun> {
  const stdout = bufferSink();
  const stderr = bufferSink();
  const code = await runCli(args, {
    stdout,
    stderr,
    stdin: options.stdin ?? notATerminal(),
    cwd: options.cwd,
    env: {},
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
