import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { findBatonPackage } from '../../cli/scaffold/baton-package.js';
import { runBaton } from '../cli/run-baton.js';

const baton = findBatonPackage();

/**
 * The "exports" map a generated project needs in Baton's package.json: `baton/<path>.js` loads
 * the compiled `dist/<path>.js` at run time, while TypeScript reads the types from the sources
 * `<path>.ts` (Baton emits no .d.ts). Until Baton's package.json carries it, the tests put it in
 * a stand-in package whose directories link to this checkout.
 */
export const BATON_EXPORTS = {
  './package.json': './package.json',
  './*': { types: './*', default: './dist/*' },
};

export interface GeneratedProject {
  dir: string;
  /** True when Baton's package.json lacks "exports" and a stand-in package was linked instead. */
  standIn: boolean;
}

/**
 * Runs `baton new ...args` in a fresh temp dir and makes the result buildable without npm:
 * node_modules links to this checkout's installed packages, and `baton` to this checkout, as
 * `npm install` of the `file:` dependency would. CI has no network but the registry, and an
 * install per template would take minutes.
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
  const standIn = await linkDependencies(dir);
  return { dir, standIn };
}

async function linkDependencies(dir: string): Promise<boolean> {
  const modules = join(dir, 'node_modules');
  await mkdir(modules);
  const installed = join(baton.root, 'node_modules');
  for (const entry of await readdir(installed)) {
    if (entry === 'baton' || entry === '.package-lock.json') continue;
    await symlink(join(installed, entry), join(modules, entry));
  }
  const manifest = JSON.parse(readFileSync(join(baton.root, 'package.json'), 'utf8')) as {
    exports?: unknown;
  };
  if (manifest.exports !== undefined) {
    await symlink(baton.root, join(modules, 'baton'));
    return false;
  }
  const standIn = join(modules, 'baton');
  await mkdir(standIn);
  await writeFile(
    join(standIn, 'package.json'),
    JSON.stringify({
      name: 'baton',
      version: baton.version,
      type: 'module',
      exports: BATON_EXPORTS,
    }),
  );
  for (const entry of ['framework', 'plugins', 'hosts', 'dist', 'node_modules']) {
    if (existsSync(join(baton.root, entry)))
      await symlink(join(baton.root, entry), join(standIn, entry));
  }
  return true;
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
      ? join(baton.root, 'node_modules/typescript/bin/tsc')
      : join(baton.root, 'node_modules/ava/entrypoints/cli.mjs');
  const args = tool === 'tsc' ? ['-p', 'tsconfig.json'] : [];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: dir,
      env: { ...process.env, CI: '1', FORCE_COLOR: '0' },
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
