import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { findBatonPackage } from '@baton/cli/internal/scaffold/baton-package.js';
import { runBaton } from '../cli/run-baton.js';

const baton = findBatonPackage();

export interface GeneratedProject {
  dir: string;
}

/** The Baton checkout these tests run in: its node_modules holds the workspace's @baton/* links. */
const checkout = baton.checkout ?? raise('these tests run from a Baton checkout');

function raise(message: string): never {
  throw new Error(message);
}

/**
 * Runs `baton new ...args` in a fresh temp dir and makes the result buildable without npm:
 * node_modules links to this checkout's installed packages, @baton/* among them (the workspace
 * links, whose package.json exports and dist/ .d.ts files are what a registry install holds), as
 * `npm install` would. An install per template would take minutes; the published packages are
 * installed from a registry by the registry test.
 */
export async function generateProject(
  t: Pick<ExecutionContext, 'teardown'>,
  args: readonly string[],
): Promise<GeneratedProject> {
  const cwd = await mkdtemp(join(tmpdir(), 'baton-template-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  const run = await runBaton([...args, '--dir', 'project', '--json'], { cwd });
  if (run.code !== 0) throw new Error(`baton ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  const dir = join(cwd, 'project');
  await linkDependencies(dir);
  return { dir };
}

async function linkDependencies(dir: string): Promise<void> {
  const modules = join(dir, 'node_modules');
  await mkdir(modules);
  const installed = join(checkout, 'node_modules');
  for (const entry of await readdir(installed)) {
    if (entry === '.package-lock.json') continue;
    await symlink(join(installed, entry), join(modules, entry));
  }
}

export interface ProcessResult {
  code: number | null;
  output: string;
}

/** Runs a Node tool of this checkout (tsc, ava) in the project, stdout and stderr together. */
export function runTool(
  dir: string,
  tool: 'tsc' | 'ava',
  timeoutMs = 110_000,
): Promise<ProcessResult> {
  const script =
    tool === 'tsc'
      ? join(checkout, 'node_modules/typescript/bin/tsc')
      : join(checkout, 'node_modules/ava/entrypoints/cli.mjs');
  const args = tool === 'tsc' ? ['-p', 'tsconfig.json'] : [];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: dir,
      // As a user's project runs: without the condition that reaches Baton's internal modules.
      env: { ...process.env, CI: '1', FORCE_COLOR: '0', NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolve({
        code,
        output: signal ? `${output}\n(killed by ${signal} after ${timeoutMs} ms)` : output,
      }),
    );
  });
}
