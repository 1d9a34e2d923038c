import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { collectRun, spawnBaton, type BatonRun } from './run-baton.js';
import { workDir } from './temp-project.js';

function bash(script: string): Promise<BatonRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    collectRun(child, resolve, reject);
  });
}

test('baton completion bash is a script bash accepts (bash -n) that names the commands and completes them', async (t) => {
  const run = await spawnBaton(['completion', 'bash']);
  t.is(run.code, ExitCode.Ok, run.stderr);
  for (const command of ['up', 'status', 'streams', 'authority', 'context', 'completion', 'rebalance', 'drain'])
    t.regex(run.stdout, new RegExp(`\\b${command}\\b`));
  const file = join(await workDir(t), 'baton.bash');
  await writeFile(file, run.stdout);
  const syntax = await bash(`bash -n ${file}`);
  t.is(syntax.code, 0, syntax.stderr);
  // Completing as bash would: the words after "baton streams dr", the values of -o, a subcommand's flags.
  const complete = (...words: string[]) =>
    bash(`source ${file}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _baton; echo "\${COMPREPLY[*]}"`);
  t.is((await complete('baton', 'streams', 'dr')).stdout, 'drain\n');
  t.is((await complete('baton', 'con')).stdout, 'context\n');
  t.is((await complete('baton', 'status', '-o', '')).stdout, 'table wide json yaml name\n');
  t.regex((await complete('baton', '--json', 'streams', 'rebalance', '--')).stdout, /--dry-run .*--yes .*--context/);
});

test('baton completion zsh and fish name the commands; an unknown shell is a usage error', async (t) => {
  const zsh = await spawnBaton(['completion', 'zsh']);
  t.is(zsh.code, ExitCode.Ok, zsh.stderr);
  t.true(zsh.stdout.startsWith('#compdef baton\n'));
  t.regex(zsh.stdout, /'streams rebalance'\) echo '[^']*--yes/);
  const fish = await spawnBaton(['completion', 'fish']);
  t.is(fish.code, ExitCode.Ok, fish.stderr);
  t.regex(fish.stdout, /complete -c baton -n '__baton_at \\'streams\\'' -a 'rebalance'/);
  t.regex(fish.stdout, /-l output -s o -x -a 'table wide json yaml name'/);
  const bad = await spawnBaton(['completion', 'powershell']);
  t.is(bad.code, ExitCode.Usage);
  t.regex(bad.stderr, /bash, zsh, fish/);
});
