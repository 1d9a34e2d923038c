import test from 'ava';
import type { Command } from 'commander';
import { buildProgram } from '@baton/cli/internal/program.js';
import { findBatonPackage } from '@baton/cli/internal/scaffold/baton-package.js';
import { bufferSink, notATerminal, spawnBaton } from './run-baton.js';

/** Every command path of the program: ['up'], ['new'], ['new', 'host'], ... */
function commandPaths(): string[][] {
  const program = buildProgram({
    stdout: bufferSink(),
    stderr: bufferSink(),
    stdin: notATerminal(),
    cwd: process.cwd(),
    env: {},
    pkg: findBatonPackage(),
  });
  const paths: string[][] = [];
  const visit = (command: Command, path: string[]) => {
    for (const sub of command.commands) {
      if (sub.name() === 'help') continue;
      paths.push([...path, sub.name()]);
      visit(sub, [...path, sub.name()]);
    }
  };
  visit(program, []);
  return paths;
}

test('baton --help lists the commands, the global options and the exit codes, and exits 0', async (t) => {
  const run = await spawnBaton(['--help']);
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, /^Usage: baton \[options\] \[command\]/);
  for (const command of ['up', 'status', 'streams', 'authority', 'new', 'repair'])
    t.regex(run.stdout, new RegExp(`\\n  ${command}\\b`));
  t.regex(run.stdout, /--json/);
  t.regex(
    run.stdout,
    /Exit codes:\n\s+0\s+ok\n\s+1\s+refused or failed.*\n\s+2\s+usage error.*\n\s+3\s+unreachable/,
  );
});

test('the program has the command groups the CLI documents', (t) => {
  t.deepEqual(
    commandPaths().map((path) => path.join(' ')),
    [
      'up',
      'status',
      'node',
      'node list',
      'node stop',
      'node start',
      'node maintenance',
      'streams',
      'streams create',
      'streams append',
      'streams read',
      'streams status',
      'streams list',
      'streams transfer',
      'streams transfers',
      'streams drain',
      'streams undrain',
      'streams failover',
      'streams rebalance',
      'streams nodes',
      'streams nodes add',
      'plan',
      'plan create',
      'plan list',
      'plan show',
      'plan execute',
      'plan set',
      'plan cancel',
      'authority',
      'authority create',
      'authority write',
      'authority transfer',
      'authority cancel',
      'authority status',
      'authority audit',
      'authority members',
      'authority list',
      'audit',
      'audit list',
      'audit show',
      'audit verify',
      'member',
      'member list',
      'member add',
      'member remove',
      'leader',
      'leader move',
      'snapshot',
      'snapshot save',
      'snapshot restore',
      'new',
      'new host',
      'new plugin',
      'repair',
      'repair wal',
      'repair raft',
      'context',
      'context list',
      'context use',
      'context show',
      'version',
      'completion',
    ],
  );
});

for (const path of commandPaths()) {
  test(`baton ${path.join(' ')} --help describes the command and every option, and exits 0`, async (t) => {
    const run = await spawnBaton([...path, '--help']);
    t.is(run.code, 0, run.stderr);
    t.is(run.stderr, '');
    t.true(run.stdout.startsWith(`Usage: baton ${path.join(' ')}`), run.stdout);
    const options = run.stdout.split('\nOptions:\n')[1]?.split('\n\n')[0] ?? '';
    t.not(options, '', 'an Options section');
    // Each option line names the flag and then says what it does.
    for (const line of options.split('\n').filter((l) => /^\s{2}-/.test(l))) {
      t.regex(line, /^\s{2}-.*\S\s{2,}\S/, `option without a description: ${line}`);
    }
    t.regex(run.stdout, /--json/, 'the global options are shown too');
    if (path[0] === 'streams' || path[0] === 'authority' || path[0] === 'status' || path[0] === 'plan') {
      t.regex(
        run.stdout,
        new RegExp(`\\nExamples:\\n(  .*\\n)*  baton ${path.join(' ')}\\b`),
        'examples of its use',
      );
    }
  });
}

test('baton new plugin --help lists the contracts and says generated tests fail until implemented', async (t) => {
  const run = await spawnBaton(['new', 'plugin', '--help']);
  t.is(run.code, 0, run.stderr);
  for (const contract of ['object-store', 'audit-store', 'identity-supplier'])
    t.regex(run.stdout, new RegExp(`\\n  ${contract}\\s`));
  t.regex(run.stdout, /fail until the plugin is implemented/);
});

test('baton new host --help lists the plugins each variant can choose', async (t) => {
  const run = await spawnBaton(['new', 'host', '--help']);
  t.is(run.code, 0, run.stderr);
  t.regex(
    run.stdout,
    /authority: --consensus single-member\s+--audit-store fs\|memory\|redis\s+--identity opaque\|npm\|pypi\|oci/,
  );
  t.regex(run.stdout, /stream: --consensus raft\s+--object-store fs\|memory/);
  t.regex(
    run.stdout,
    /default\s+single-member\s+\(authority\),\s+raft\s+\(stream\)/,
    'a default per variant',
  );
});

test('baton --version prints the package version and exits 0', async (t) => {
  const run = await spawnBaton(['--version']);
  t.is(run.code, 0);
  t.is(run.stdout.trim(), findBatonPackage().version);
});
