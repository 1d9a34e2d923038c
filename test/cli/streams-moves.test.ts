import test from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { runBaton, spawnBaton, terminalTyping } from './run-baton.js';
import { startStreamCluster, type StreamCluster } from './stream-cluster.js';

const cwd = process.cwd();
/** How terminal control sequences (cursor moves, line clears) begin. */
const CSI = '\u001b[';

async function baton(cluster: StreamCluster, ...args: string[]) {
  return runBaton(args, { cwd, env: cluster.env });
}

/** Creates streams on `owner` and waits until each is open there. */
async function createOn(cluster: StreamCluster, owner: string, names: readonly string[]) {
  for (const name of names) {
    const run = await baton(cluster, 'streams', 'create', name, '--owner', owner);
    if (run.code !== 0) throw new Error(`create ${name}: ${run.stderr}`);
    await cluster.writable(name);
  }
}

test('streams transfer waits for the handoff and shows where the stream is open now', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2']);
  await createOn(cluster, 'n1', ['events']);
  await baton(cluster, 'streams', 'append', 'events', 'before');
  const run = await baton(
    cluster,
    'streams',
    'transfer',
    'events',
    '--to',
    'n2',
    '--interval',
    '20',
  );
  t.is(run.code, ExitCode.Ok, run.stderr);
  t.regex(run.stdout, /^moved events from n1 to n2: open at epoch 2 \(handoff took \d+\.\d s\)\n$/);
  t.regex(run.stderr, /waiting for the handoff of events from n1 to n2/);
  t.like(cluster.consensus.view().state.stream('events')!, { owner: 'n2', epoch: 2 });
  // The client follows the new owner: the next append lands on n2, after the first record.
  const append = await baton(cluster, 'streams', 'append', 'events', 'after', '--json');
  t.like(JSON.parse(append.stdout), { first: 1, node: 'n2', epoch: 2 });
});

test('streams transfer --json gives the outcome as one document; --no-wait returns once accepted', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2']);
  await createOn(cluster, 'n1', ['a', 'b']);
  const waited = await baton(
    cluster,
    'streams',
    'transfer',
    'a',
    '--to',
    'n2',
    '--json',
    '--interval',
    '20',
  );
  t.is(waited.code, ExitCode.Ok, waited.stderr);
  t.like(JSON.parse(waited.stdout), {
    stream: 'a',
    source: 'n1',
    target: 'n2',
    status: 'settled',
    owner: 'n2',
    epoch: 2,
  });
  t.is(waited.stderr, '');
  const accepted = await baton(cluster, 'streams', 'transfer', 'b', '--to', 'n2', '--no-wait');
  t.is(accepted.code, ExitCode.Ok, accepted.stderr);
  t.regex(accepted.stdout, /transfer of b from n1 to n2 accepted; the handoff is in progress/);
});

test('streams transfer to the owner is a no-op; to a draining or unknown node it is refused with the reason', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2']);
  await createOn(cluster, 'n1', ['events']);
  const owner = await baton(cluster, 'streams', 'transfer', 'events', '--to', 'n1');
  t.is(owner.code, ExitCode.Ok, owner.stderr);
  t.is(owner.stdout, 'events is already on n1: nothing to move\n');
  await baton(cluster, 'streams', 'drain', 'n2', '--yes');
  const draining = await baton(cluster, 'streams', 'transfer', 'events', '--to', 'n2');
  t.is(draining.code, ExitCode.Failed);
  t.regex(
    draining.stderr,
    /^baton: http:\/\/127\.0\.0\.1:\d+ refused \(409\): target node n2 is draining and takes no new streams\n$/,
  );
  const unknown = await baton(cluster, 'streams', 'transfer', 'events', '--to', 'n7', '--json');
  t.is(unknown.code, ExitCode.Failed);
  t.is(JSON.parse(unknown.stderr).error.code, 'rejected-unknown-node');
});

test('streams transfer without --to is a usage error naming the option', async (t) => {
  const run = await runBaton(['streams', 'transfer', 'events'], { cwd });
  t.is(run.code, ExitCode.Usage);
  t.regex(run.stderr, /required option '--to <node>' not specified/);
});

test('streams drain off a terminal prints one line per change, then says the node is drained', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2', 'n3']);
  const names = ['s1', 's2', 's3', 's4'];
  await createOn(cluster, 'n1', names);
  const run = await baton(
    cluster,
    'streams',
    'drain',
    'n1',
    '--yes',
    '--max-in-flight',
    '1',
    '--interval',
    '10',
  );
  t.is(run.code, ExitCode.Ok, run.stderr);
  const lines = run.stdout.trimEnd().split('\n');
  t.is(lines.at(-1), 'n1 is drained: it owns no streams and can be taken down');
  const progress = lines.slice(0, -1);
  t.true(progress.length >= 1, run.stdout);
  for (const line of progress)
    t.regex(line, /^draining n1: \d of 4 stream\(s\) moved, \d to go, \d moving$/);
  t.is(progress.at(-1), 'draining n1: 4 of 4 stream(s) moved, 0 to go, 0 moving');
  t.is(new Set(progress).size, progress.length, 'a line per change, never the same line twice');
  t.false(run.stdout.includes(CSI), 'no terminal control sequences in a log');
  const owners = names.map((name) => cluster.consensus.view().state.stream(name)!.owner);
  t.false(owners.includes('n1'));
});

test('streams drain --json puts progress lines on stderr and one final document on stdout', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2']);
  await createOn(cluster, 'n1', ['s1', 's2']);
  const run = await baton(cluster, 'streams', 'drain', 'n1', '--yes', '--json', '--interval', '10');
  t.is(run.code, ExitCode.Ok, run.stderr);
  t.like(JSON.parse(run.stdout), { id: 'n1', draining: true, drained: true, owned: 0 });
  const updates = run.stderr
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { progress: { remaining: number } });
  t.true(updates.length >= 1);
  t.is(updates.at(-1)!.progress.remaining, 0);
});

test('streams drain on a terminal draws a progress bar and clears it before the result', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2']);
  await createOn(cluster, 'n1', ['s1', 's2']);
  const run = await runBaton(['streams', 'drain', 'n1', '--yes', '--interval', '10'], {
    cwd,
    env: cluster.env,
    stdoutIsTTY: true,
  });
  t.is(run.code, ExitCode.Ok, run.stderr);
  t.regex(run.stdout, /draining n1 \[[=-]+\] \d\/2 /);
  t.true(run.stdout.includes(CSI), 'drawn with terminal control sequences');
  t.true(run.stdout.endsWith('n1 is drained: it owns no streams and can be taken down\n'));
});

test('streams drain --no-wait returns at once; undrain puts the node back in service', async (t) => {
  const cluster = await startStreamCluster(t, ['n1']);
  await createOn(cluster, 'n1', ['s1']);
  // Alone in the cluster, n1 has nowhere to send its stream: the drain waits.
  const drain = await baton(cluster, 'streams', 'drain', 'n1', '--yes', '--no-wait');
  t.is(drain.code, ExitCode.Ok, drain.stderr);
  t.regex(
    drain.stdout,
    /n1 is draining: 1 stream\(s\) to move, 0 moving now \(waiting for a node with free slots\)/,
  );
  const nodes = await baton(cluster, 'streams', 'nodes');
  t.regex(nodes.stdout, /n1\s+http:\S+\s+Alive( \(\d+\.\d s\))?\s+1000\s+1\s+0\s+0\s+draining/);
  const undrain = await baton(cluster, 'streams', 'undrain', 'n1');
  t.is(undrain.code, ExitCode.Ok, undrain.stderr);
  t.is(undrain.stdout, 'n1 is in service: it owns 1 stream(s)\n');
  t.false(cluster.consensus.view().state.node('n1')!.draining);
});

test('a drain that cannot finish in time exits 3 (no answer in time), saying why and how to follow it', async (t) => {
  const cluster = await startStreamCluster(t, ['n1']);
  await createOn(cluster, 'n1', ['s1']);
  const run = await baton(
    cluster,
    'streams',
    'drain',
    'n1',
    '--yes',
    '--timeout',
    '0.3',
    '--interval',
    '20',
  );
  t.is(run.code, ExitCode.Unreachable);
  t.regex(
    run.stderr,
    /n1 still owns 1 stream\(s\) after 0\.3 s: no other node can take them .*run "baton streams drain n1" again/,
  );
});

test('streams drain of an unknown node is refused with the reason', async (t) => {
  const cluster = await startStreamCluster(t, ['n1']);
  const run = await baton(cluster, 'streams', 'drain', 'n9', '--yes');
  t.is(run.code, ExitCode.Failed);
  t.regex(run.stderr, /node n9 is not registered/);
});

test('streams rebalance --dry-run shows each move from -> to and each node before and after, and moves nothing; then it runs to the end', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2']);
  const names = ['r1', 'r2', 'r3', 'r4'];
  await createOn(cluster, 'n1', names);
  const dry = await baton(cluster, 'streams', 'rebalance', '--dry-run');
  t.is(dry.code, ExitCode.Ok, dry.stderr);
  t.regex(
    dry.stdout,
    /^would move 2 stream\(s\):\n {2}r\d: n1 -> n2\n {2}r\d: n1 -> n2\n\nNODE +NOW +OUT +IN +AFTER\nn1 +4 +2 +0 +2\nn2 +0 +0 +2 +2\n$/,
  );
  t.is(cluster.consensus.view().state.transferCount, 0);
  const json = await baton(cluster, 'streams', 'rebalance', '--dry-run', '--json');
  const plan = JSON.parse(json.stdout) as { moves: { source: string; target: string }[] };
  t.deepEqual(plan.moves.map((m) => `${m.source}->${m.target}`), ['n1->n2', 'n1->n2']);

  // Without a terminal there is no one to ask: nothing moves without --yes.
  const unasked = await baton(cluster, 'streams', 'rebalance', '--interval', '10');
  t.is(unasked.code, ExitCode.Usage);
  t.regex(unasked.stderr, /streams rebalance moves many streams and stdin is not a terminal to ask on: give --yes/);
  t.is(cluster.consensus.view().state.transferCount, 0);
  t.is(cluster.consensus.view().state.rebalance, undefined, 'no rebalance was started');

  const run = await baton(cluster, 'streams', 'rebalance', '--yes', '--interval', '10');
  t.is(run.code, ExitCode.Ok, run.stderr);
  t.notRegex(run.stderr, /\[y\/N\]/, 'nothing was asked');
  t.regex(run.stderr, /moving 2 stream\(s\):\n {2}r\d: n1 -> n2/, 'the plan is shown first');
  t.regex(run.stdout, /rebalancing: 2 of 2 move\(s\) done, 0 moving, 0 waiting\n/);
  t.true(run.stdout.endsWith('rebalanced: 2 stream(s) moved\n'));
  const owners = names.map((name) => cluster.consensus.view().state.stream(name)!.owner);
  t.is(owners.filter((o) => o === 'n2').length, 2);

  const balanced = await baton(cluster, 'streams', 'rebalance', '--yes', '--json');
  t.like(JSON.parse(balanced.stdout), { dryRun: false, moves: [], settled: true });
});

test('streams rebalance on a terminal shows the plan and asks: "n" moves nothing, "y" runs it with a bar that states the count once', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2']);
  await createOn(cluster, 'n1', ['q1', 'q2', 'q3', 'q4']);
  const atTerminal = (answer: string, ...args: string[]) =>
    runBaton(['streams', 'rebalance', '--interval', '10', ...args], {
      cwd,
      env: cluster.env,
      stdin: terminalTyping([answer]),
      stdoutIsTTY: true,
    });

  const declined = await atTerminal('n');
  t.is(declined.code, ExitCode.Ok, declined.stderr);
  t.regex(declined.stderr, /would move 2 stream\(s\):\n {2}q\d: n1 -> n2\n[\s\S]*move these 2 stream\(s\)\? \[y\/N\] $/);
  t.is(declined.stdout, 'nothing moved\n');
  t.is(cluster.consensus.view().state.transferCount, 0);
  t.is(cluster.consensus.view().state.rebalance, undefined, 'no rebalance was started');

  const agreed = await atTerminal('y');
  t.is(agreed.code, ExitCode.Ok, agreed.stderr);
  t.true(agreed.stdout.endsWith('rebalanced: 2 stream(s) moved\n'));
  t.regex(agreed.stdout, /rebalancing \[[=-]+\] \d\/2 move\(s\) done/);
  t.notRegex(agreed.stdout, /\d\/\d \d of \d/, 'the count is not repeated');
});

test('streams rebalance --yes on a terminal runs without asking', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2']);
  await createOn(cluster, 'n1', ['w1', 'w2']);
  const run = await runBaton(['streams', 'rebalance', '--yes', '--interval', '10'], {
    cwd,
    env: cluster.env,
    stdin: terminalTyping([]),
  });
  t.is(run.code, ExitCode.Ok, run.stderr);
  t.notRegex(run.stderr, /\[y\/N\]|not a terminal/);
  t.true(run.stdout.endsWith('rebalanced: 1 stream(s) moved\n'));
});

test('streams nodes lists the nodes; nodes add registers one and is idempotent', async (t) => {
  const cluster = await startStreamCluster(t, ['n1']);
  const add = await baton(
    cluster,
    'streams',
    'nodes',
    'add',
    'n5',
    '--address',
    'http://10.0.0.5:7700',
    '--slots',
    '20',
  );
  t.is(add.code, ExitCode.Ok, add.stderr);
  t.is(add.stdout, 'registered n5 at http://10.0.0.5:7700 with 20 slots\n');
  const again = await baton(
    cluster,
    'streams',
    'nodes',
    'add',
    'n5',
    '--address',
    'http://10.0.0.5:7700',
    '--slots',
    '20',
  );
  t.regex(again.stdout, /n5 was already registered/);
  const list = await baton(cluster, 'streams', 'nodes');
  t.is(list.code, ExitCode.Ok, list.stderr);
  const [header, ...rows] = list.stdout.trimEnd().split('\n');
  t.regex(header, /^NODE\s+ADDRESS\s+LIVENESS\s+SLOTS\s+OWNED\s+IN\s+OUT\s+STATE$/);
  t.is(rows.length, 2);
  t.regex(rows[1], /^n5\s+http:\/\/10\.0\.0\.5:7700\s+(Alive|Suspect|Dead)( \(\d+\.\d s\))?\s+20\s+0\s+0\s+0\s+in service$/);
  const json = await baton(cluster, 'streams', 'nodes', '--json');
  t.deepEqual(
    (JSON.parse(json.stdout) as { nodes: { id: string }[] }).nodes.map((n) => n.id),
    ['n1', 'n5'],
  );
  const bad = await baton(cluster, 'streams', 'nodes', 'add', 'n6', '--address', 'not-a-url');
  t.is(bad.code, ExitCode.Failed);
  t.regex(bad.stderr, /refused \(400\): .*address must be an http\(s\) URL/);
});

test('the executable drains with one line per change when stdout is a pipe', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2']);
  await createOn(cluster, 'n1', ['s1', 's2', 's3']);
  const run = await spawnBaton(
    ['streams', 'drain', 'n1', '--yes', '--interval', '10', '--max-in-flight', '1'],
    {
      env: cluster.env,
    },
  );
  t.is(run.code, ExitCode.Ok, run.stderr);
  t.regex(run.stdout, /draining n1: 3 of 3 stream\(s\) moved, 0 to go, 0 moving\nn1 is drained/);
});

test('a handoff that does not settle in time exits 3 (no answer in time) and says it goes on; transfers and status show it pending', async (t) => {
  const cluster = await startStreamCluster(t, ['n1']);
  // n9 is registered but never runs: it never closes its stream, so the handoff cannot settle.
  await baton(cluster, 'streams', 'nodes', 'add', 'n9', '--address', 'http://127.0.0.1:9');
  await baton(cluster, 'streams', 'create', 'stuck', '--owner', 'n9');
  const run = await baton(
    cluster,
    'streams',
    'transfer',
    'stuck',
    '--to',
    'n1',
    '--timeout',
    '0.3',
    '--interval',
    '20',
  );
  t.is(run.code, ExitCode.Unreachable);
  t.regex(
    run.stderr,
    /the handoff of stuck from n9 to n1 has not settled within 0\.3 s; it continues on the cluster .*"baton streams status stuck"/,
  );
  const transfers = await baton(cluster, 'streams', 'transfers');
  t.is(transfers.stdout, 'stuck: n9 -> n1 (admin, from epoch 1)\n');
  const status = await baton(cluster, 'streams', 'status', 'stuck');
  t.regex(status.stdout, /transfer\s+n9 -> n1 \(admin\), pending/);
  const none = await runBaton(['streams', 'transfers', '--json'], {
    cwd,
    env: (await startStreamCluster(t, ['n1'])).env,
  });
  t.deepEqual(JSON.parse(none.stdout), { transfers: [] });
});

test('streams failover refuses a node that is not Dead (exit 1, the reason), moves its streams with --force', async (t) => {
  const cluster = await startStreamCluster(t, ['n1']);
  await baton(cluster, 'streams', 'nodes', 'add', 'n7', '--address', 'http://127.0.0.1:9');
  const refused = await baton(cluster, 'streams', 'failover', 'n1', '--yes');
  t.is(refused.code, ExitCode.Failed);
  t.regex(refused.stderr, /409\)?: node n1 is Alive: a failover takes its streams without its close/);
  await baton(cluster, 'streams', 'create', 'gone', '--owner', 'n7');
  const forced = await baton(cluster, 'streams', 'failover', 'n7', '--yes', '--force', '--json');
  t.is(forced.code, ExitCode.Ok, forced.stderr);
  t.like(JSON.parse(forced.stdout), { id: 'n7', moved: 1, remaining: 0, owned: 0 });
  const again = await baton(cluster, 'streams', 'failover', 'n7', '--yes', '--force');
  t.regex(again.stdout, /n7 owns no stream to fail over/);
});

test('streams drain and failover without a terminal need --yes: refused with exit 2 naming --yes, nothing moved; with --yes they run', async (t) => {
  const cluster = await startStreamCluster(t, ['n1', 'n2']);
  await createOn(cluster, 'n1', ['d1', 'd2']);
  const drain = await spawnBaton(['streams', 'drain', 'n1', '--interval', '10'], { env: cluster.env });
  t.is(drain.code, ExitCode.Usage);
  t.regex(drain.stderr, /streams drain n1 moves many streams and stdin is not a terminal to ask on: give --yes/);
  t.is(cluster.consensus.view().state.transferCount, 0);
  t.false(cluster.consensus.view().state.node('n1')!.draining, 'the drain was not started');
  const failover = await baton(cluster, 'streams', 'failover', 'n2', '--force');
  t.is(failover.code, ExitCode.Usage);
  t.regex(failover.stderr, /give --yes/);
  const json = await baton(cluster, 'streams', 'drain', 'n1', '--json');
  t.is(json.code, ExitCode.Usage);
  t.like(JSON.parse(json.stderr), { error: { code: 'usage', exitCode: 2 } });

  const agreed = await spawnBaton(['streams', 'drain', 'n1', '--yes', '--interval', '10'], { env: cluster.env });
  t.is(agreed.code, ExitCode.Ok, agreed.stderr);
  t.regex(agreed.stdout, /n1 is drained/);
  const declined = await runBaton(['streams', 'failover', 'n2', '--force'], { cwd, env: cluster.env, stdin: terminalTyping(['n']) });
  t.is(declined.code, ExitCode.Ok, declined.stderr);
  t.regex(declined.stderr, /give every stream of n2 to live nodes\? \[y\/N\] $/);
  t.is(declined.stdout, 'nothing moved\n');
});
