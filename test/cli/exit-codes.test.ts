import test from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { spawnBaton } from './run-baton.js';

test('an unknown command exits 2 and says which, and where help is', async (t) => {
  const run = await spawnBaton(['launch']);
  t.is(run.code, ExitCode.Usage);
  t.is(run.stdout, '');
  t.regex(run.stderr, /^baton: unknown command 'launch'.*run "baton --help" for usage/);
});

test('an unknown option exits 2 and points at the help of the command it was given to', async (t) => {
  const run = await spawnBaton(['new', 'plugin', 'acme', '--contract', 'object-store', '--colour']);
  t.is(run.code, ExitCode.Usage);
  t.regex(run.stderr, /unknown option '--colour'.*baton new plugin --help/);
});

test('a missing required option exits 2 and names it', async (t) => {
  const run = await spawnBaton(['new', 'plugin', 'acme']);
  t.is(run.code, ExitCode.Usage);
  t.regex(run.stderr, /--contract/);
});

test('an invalid choice exits 2 and lists the valid ones', async (t) => {
  const run = await spawnBaton(['up', '--variant', 'banana']);
  t.is(run.code, ExitCode.Usage);
  t.regex(run.stderr, /'banana' is invalid.*stream, authority/);
});

test('a command group without its subcommand shows its help and exits 2', async (t) => {
  const run = await spawnBaton(['new']);
  t.is(run.code, ExitCode.Usage);
  t.regex(run.stderr, /Usage: baton new/);
  t.notRegex(run.stderr, /outputHelp/);
});

test('errors never show a stack trace', async (t) => {
  const run = await spawnBaton(['new', 'plugin', 'Not_Valid', '--contract', 'object-store']);
  t.is(run.code, ExitCode.Usage);
  t.notRegex(run.stderr, /\n\s+at /);
  t.regex(run.stderr, /invalid plugin name "Not_Valid"/);
});

test('with --json an error is one JSON document on stderr and stdout stays empty', async (t) => {
  const run = await spawnBaton(['up', '--variant', 'banana', '--json']);
  t.is(run.code, ExitCode.Usage);
  t.is(run.stdout, '');
  const { error } = JSON.parse(run.stderr) as {
    error: { code: string; message: string; exitCode: number };
  };
  t.is(error.code, 'usage');
  t.is(error.exitCode, ExitCode.Usage);
  t.regex(error.message, /banana/);
});

