import { spawn } from 'node:child_process';
import { symlink, writeFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { batonInvocation } from '@baton/cli/internal/invocation.js';
import { findBatonPackage } from '@baton/cli/internal/scaffold/baton-package.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { collectRun, type BatonRun } from './run-baton.js';

const pkg = findBatonPackage();
const main = join(pkg.cli, 'dist', 'main.js');

/** Runs `command` in a shell at `cwd`, as a person would type it. */
function shell(command: string, cwd: string): Promise<BatonRun> {
  return new Promise((resolve, reject) => {
    collectRun(spawn('/bin/sh', ['-c', command], { cwd, stdio: ['ignore', 'pipe', 'pipe'] }), resolve, reject);
  });
}

test('inside the checkout the command is "npx baton", and it runs this CLI', async (t) => {
  const invocation = batonInvocation({ cwd: join(pkg.checkout!, 'cli'), env: { PATH: '/usr/bin:/bin' }, pkg });
  t.is(invocation, 'npx baton');
  const run = await shell(`${invocation} --version`, pkg.checkout!);
  t.is(run.code, 0, run.stderr);
  t.is(run.stdout.trim(), pkg.version);
});

test('elsewhere it is node with the entry point, which runs as typed', async (t) => {
  const dir = await makeTempDir('baton-invocation');
  t.teardown(() => dir.remove());
  const invocation = batonInvocation({ cwd: dir.path, env: { PATH: '/usr/bin:/bin' }, pkg });
  t.is(invocation, `node ${main}`);
  const run = await shell(`${invocation} --version`, dir.path);
  t.is(run.code, 0, run.stderr);
  t.is(run.stdout.trim(), pkg.version);
});

test('a PATH whose first baton links to this CLI (npm link) gives plain "baton"; another baton does not', async (t) => {
  const dir = await makeTempDir('baton-invocation-path');
  t.teardown(() => dir.remove());
  const linked = join(dir.path, 'linked');
  const other = join(dir.path, 'other');
  await shell(`mkdir -p ${linked} ${other}`, dir.path);
  // What npm link makes: a link on the PATH to the bin, which it marks executable (tsc does not).
  await chmod(main, 0o755);
  await symlink(main, join(linked, 'baton'));
  await writeFile(join(other, 'baton'), '#!/bin/sh\necho another baton\n');
  await chmod(join(other, 'baton'), 0o755);
  t.is(batonInvocation({ cwd: dir.path, env: { PATH: `${linked}:/usr/bin` }, pkg }), 'baton');
  t.is(batonInvocation({ cwd: dir.path, env: { PATH: `${other}:${linked}` }, pkg }), `node ${main}`);
});
