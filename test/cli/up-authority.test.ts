import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { runBaton } from './run-baton.js';
import { runShellSession, type ShellStep } from './shell-session.js';
import { workDir } from './temp-project.js';
import { asBaton, printedBatonCommands, startUp, upAndReady } from './up-process.js';

const MEMBER_LINE =
  /^\s+(\S+-1)\s+(\w+)\s+control (http:\/\/127\.0\.0\.1:\d+)\s+public (http:\/\/127\.0\.0\.1:\d+)/gm;

/** The step whose command starts with `prefix`, failing the test when there is none. */
function step(steps: readonly ShellStep[], prefix: string): ShellStep {
  const found = steps.find((s) => asBaton(s.command)?.startsWith(prefix));
  if (!found) throw new Error(`no printed command starts with "${prefix}"`);
  return found;
}

test('baton up --variant authority: the printed commands move proj with a reason, audit it and cancel a transfer that cannot commit; SIGINT keeps the data and a restart resumes with the same home and epoch', async (t) => {
  t.timeout(240_000);
  const cwd = await workDir(t);
  const dataDir = join(cwd, 'data');

  const first = startUp(t, ['--variant', 'authority', '--data-dir', dataDir]);
  await upAndReady(first, /Ctrl-C stops the cluster/);
  const printed = first.stdout();
  const members = [...printed.matchAll(MEMBER_LINE)].map((m) => ({
    id: m[1],
    datacenter: m[2],
    control: m[3],
  }));
  t.deepEqual(
    members.map((m) => `${m.id} ${m.datacenter}`),
    ['east-1 east', 'west-1 west', 'north-1 north'],
    'one member per datacenter',
  );
  t.regex(printed, /authority proj: home east, epoch 1/);
  const token = /admin token: (\S+)/.exec(printed)![1];
  // Everything durable is kept apart from the stream variant's data, under authority/.
  for (const sub of ['raft', 'feed', 'audit'])
    await t.notThrowsAsync(access(join(dataDir, 'authority', 'west-1', sub)), sub);

  const commands = printedBatonCommands(printed);
  t.is(commands[0], `export BATON_URL=${members[0].control} BATON_TOKEN=${token}`);
  // Where baton up ran (the checkout: it prints "npx baton", which works there).
  const steps = await runShellSession(commands, { cwd: process.cwd() });
  const transcript = steps.map((s) => `$ ${s.command} [${s.code}]\n${s.output}`).join('\n');

  t.regex(
    step(steps, 'baton authority members').output,
    /east-1\s+east\s+\w+[\s\S]*north-1\s+north/,
  );
  const moved = step(steps, 'baton authority transfer proj --from east --to west');
  t.is(moved.code, ExitCode.Ok, transcript);
  t.regex(moved.output, /committed: proj moved from east to west at epoch 2/);
  t.regex(moved.output, /reason\s+rebalance/);
  t.regex(step(steps, 'baton authority status proj').output, /proj: home west, epoch 2/);
  t.regex(
    step(steps, 'baton authority audit proj').output,
    /east -> west at epoch 2[\s\S]*reason\s+rebalance/,
  );
  const waiting = step(steps, 'baton authority transfer proj --from west --to south');
  t.is(waiting.code, ExitCode.Unreachable, 'the command stops waiting; the transfer goes on');
  const cancel = step(steps, 'baton authority cancel proj');
  t.is(cancel.code, ExitCode.Ok, transcript);
  t.is(
    cancel.output.trim(),
    'cancelled: the transfer of proj was called off before it committed; nothing moved',
  );

  const env = { BATON_URL: members[0].control, BATON_TOKEN: token };
  const audit = await runBaton(['authority', 'audit', 'proj', '--json'], { cwd, env });
  const records = (JSON.parse(audit.stdout) as { records: { kind: string; target: string; reason: string }[] })
    .records;
  t.deepEqual(
    records.map((r) => `${r.kind}: ${r.target}: ${r.reason}`),
    ['planned_transfer: west: rebalance', 'authority_established: east: '],
    'the cancelled transfer left no audit: the planned move and the placement baton up made are all',
  );

  first.child.kill('SIGINT');
  t.is(await first.exited, 0, `baton up should exit 0 after SIGINT; stderr: ${first.stderr()}`);
  t.regex(first.stderr(), /stopping the nodes/);
  t.regex(
    await readFile(join(dataDir, 'authority', 'cluster.json'), 'utf8'),
    /"variant": "authority"/,
  );

  const second = startUp(t, ['--variant', 'authority', '--data-dir', dataDir, '--json']);
  await upAndReady(second, /^\}$/m);
  const resumed = JSON.parse(second.stdout()) as {
    resumed: boolean;
    token: string;
    nodes: { control: string }[];
    authority: { home: string; epoch: number };
  };
  t.true(resumed.resumed);
  t.is(resumed.token, token, 'the admin token is kept across restarts');
  t.deepEqual(
    resumed.nodes.map((n) => n.control),
    members.map((m) => m.control),
    'the members answer at the ports recorded in the data dir',
  );
  t.like(resumed.authority, { home: 'west', epoch: 2 }, 'ownership and epoch survive the restart');
  const again = await runBaton(['authority', 'audit', 'proj', '--json'], { cwd, env });
  t.is(again.code, ExitCode.Ok, again.stderr);
  t.deepEqual(JSON.parse(again.stdout), JSON.parse(audit.stdout), 'the audit survives the restart');

  second.child.kill('SIGTERM');
  t.is(await second.exited, 0, `baton up should exit 0 after SIGTERM; stderr: ${second.stderr()}`);
});

test('baton up --variant authority refuses a base port that leaves no room for six listeners', async (t) => {
  const cwd = await workDir(t);
  const run = await runBaton(
    ['up', '--variant', 'authority', '--base-port', '65531', '--data-dir', join(cwd, 'data')],
    { cwd },
  );
  t.is(run.code, ExitCode.Usage);
  t.regex(
    run.stderr,
    /--base-port must be a port number from 1 to 65530 \(6 ports from it are used\)/,
  );
});
