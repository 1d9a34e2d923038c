import test from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { runBaton } from './run-baton.js';
import { workDir } from './temp-project.js';
import { startUp, upAndReady } from './up-process.js';

const READY = /Ctrl-C stops the cluster/;

test.serial('both variants on one data dir: baton node list shows the nodes of both, and the authority restart hint names --data-dir and --variant', async (t) => {
  const cwd = await workDir(t);
  const config = await workDir(t);
  const env = { XDG_CONFIG_HOME: config };
  const stream = startUp(t, ['--data-dir', 'shared'], cwd, env);
  await upAndReady(stream, READY);
  const authority = startUp(t, ['--data-dir', 'shared', '--variant', 'authority'], cwd, env);
  await upAndReady(authority, READY);
  t.regex(authority.stdout(), /"[^"]*(baton|main\.js) up --data-dir shared --variant authority" again resumes/);
  t.regex(authority.stdout(), /\ncontext: shared-authority \(named after the data dir\), now current/);

  const listed = await runBaton(['node', 'list', '--data-dir', 'shared', '-o', 'json'], { cwd });
  t.is(listed.code, ExitCode.Ok, listed.stderr);
  const nodes = (JSON.parse(listed.stdout) as { nodes: { id: string; variant: string; state: string }[] }).nodes;
  t.deepEqual(
    nodes.map((n) => `${n.variant}/${n.id}`).sort(),
    ['authority/east-1', 'authority/north-1', 'authority/west-1', 'stream/n1', 'stream/n2', 'stream/n3'],
  );
  t.true(nodes.every((n) => n.state === 'running'));
  const table = await runBaton(['node', 'list', '--data-dir', 'shared'], { cwd });
  t.regex(table.stdout, /^NODE +VARIANT +STATE +PID +LAST EXIT\n/);
  t.regex(table.stdout, /\neast-1 +authority +running +\d+/);
});
