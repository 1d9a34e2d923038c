import test, { type ExecutionContext } from 'ava';
import { runShellSession } from './shell-session.js';
import { workDir } from './temp-project.js';
import { printedBatonCommands, startUp, upAndReady } from './up-process.js';
import { missingLines, readWalkthrough } from './walkthrough-blocks.js';

/**
 * Starts `baton up ...args` in a fresh directory (its default data dir there), runs the export
 * line it printed and then every command of the README walkthrough in one shell, and checks
 * each command's exit code and the output the README shows for it.
 */
async function walkThrough(t: ExecutionContext, name: string, args: string[]): Promise<void> {
  t.timeout(240_000);
  const steps = await readWalkthrough(name);
  t.true(steps.length >= 5, `the ${name} walkthrough has its commands`);
  const cwd = await workDir(t);
  const up = startUp(t, args, cwd);
  await upAndReady(up, /Ctrl-C stops the cluster/);
  const exportLine = printedBatonCommands(up.stdout()).find((c) => c.startsWith('export '));
  if (!exportLine) throw new Error(`baton up printed no export line:\n${up.stdout()}`);

  const ran = await runShellSession([exportLine, ...steps.map((s) => s.command)], { cwd });
  t.is(ran[0].code, 0, ran[0].output);
  for (const [i, step] of steps.entries()) {
    const { code, output } = ran[i + 1];
    const what = `$ ${step.command}\n${output}`;
    t.is(code, step.code, `exit code of ${what}`);
    t.deepEqual(missingLines(step.expected, output), [], `lines the README shows for ${what}`);
  }

  up.child.kill('SIGINT');
  t.is(await up.exited, 0, up.stderr());
}

test('the README stream walkthrough runs as written on a local stream cluster', (t) =>
  walkThrough(t, 'stream', []));

test('the README authority walkthrough runs as written on a local authority cluster', (t) =>
  walkThrough(t, 'authority', ['--variant', 'authority']));

test('a walkthrough line the output lacks, or shows out of order, is reported; "..." stands for any text', (t) => {
  const output =
    'moved orders from n1 to n2: open at epoch 2 (handoff took 0.6 s)\n0\tfirst\n1\tsecond\n';
  t.deepEqual(
    missingLines(
      ['moved orders from n1 to n2: open at epoch 2 (handoff took ...)', '0 first'],
      output,
    ),
    [],
  );
  t.deepEqual(missingLines(['1 second', '0 first'], output), ['0 first']);
  t.deepEqual(missingLines(['moved orders from n1 to n3: ...'], output), [
    'moved orders from n1 to n3: ...',
  ]);
  // A whole line must match: a shown line is not found inside a longer one.
  t.deepEqual(missingLines(['first'], output), ['first']);
});
