import test from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { pipedInput, runBaton, spawnBaton } from './run-baton.js';
import { STREAM_TOKEN, startStreamCluster } from './stream-cluster.js';
import { closedPort } from './closed-port.js';

const cwd = process.cwd();

test('streams create places a stream and says where; again it says it already exists', async (t) => {
  const cluster = await startStreamCluster(t);
  const first = await runBaton(['streams', 'create', 'events'], { cwd, env: cluster.env });
  t.is(first.code, ExitCode.Ok, first.stderr);
  t.is(first.stdout, 'created stream events on n1 (epoch 1)\n');
  const again = await runBaton(['streams', 'create', 'events', '--json'], {
    cwd,
    env: cluster.env,
  });
  t.is(again.code, ExitCode.Ok, again.stderr);
  t.like(JSON.parse(again.stdout), { stream: 'events', owner: 'n1', epoch: 1, duplicate: true });
});

test('streams append sends its arguments as records, and read prints them with their offsets', async (t) => {
  const cluster = await startStreamCluster(t);
  await runBaton(['streams', 'create', 'events'], { cwd, env: cluster.env });
  await cluster.writable('events');
  const append = await runBaton(['streams', 'append', 'events', 'one', 'two words'], {
    cwd,
    env: cluster.env,
  });
  t.is(append.code, ExitCode.Ok, append.stderr);
  t.is(append.stdout, 'appended 2 records to events: offsets 0-1 (epoch 1 on n1)\n');
  const read = await runBaton(['streams', 'read', 'events'], { cwd, env: cluster.env });
  t.is(read.code, ExitCode.Ok, read.stderr);
  t.is(read.stdout, '0\tone\n1\ttwo words\n');
  t.regex(read.stderr, /next offset: 2 \(baton streams read events --from 2\)/);
});

test('streams append without bodies appends each line of stdin; read --json pages with --from and --limit', async (t) => {
  const cluster = await startStreamCluster(t);
  await runBaton(['streams', 'create', 'logs'], { cwd, env: cluster.env });
  await cluster.writable('logs');
  const lines = Array.from({ length: 5 }, (_, i) => `line ${i}`);
  const append = await runBaton(['streams', 'append', 'logs', '--json'], {
    cwd,
    env: cluster.env,
    stdin: pipedInput(`${lines.join('\n')}\n`),
  });
  t.is(append.code, ExitCode.Ok, append.stderr);
  t.like(JSON.parse(append.stdout), { stream: 'logs', appended: 5, first: 0, last: 4, node: 'n1' });
  const read = await runBaton(
    ['streams', 'read', 'logs', '--from', '1', '--limit', '3', '--json'],
    {
      cwd,
      env: cluster.env,
    },
  );
  t.is(read.code, ExitCode.Ok, read.stderr);
  t.deepEqual(JSON.parse(read.stdout), {
    stream: 'logs',
    from: 1,
    records: [1, 2, 3].map((offset) => ({ offset, body: `line ${offset}` })),
    next: 4,
  });
  t.is(read.stderr, '', '--json keeps notes off stderr');
  const past = await runBaton(['streams', 'read', 'logs', '--from', '5'], {
    cwd,
    env: cluster.env,
  });
  t.is(past.code, ExitCode.Ok, past.stderr);
  t.is(past.stdout, '', 'nothing past the tail, not even an empty line');
  t.regex(past.stderr, /no records at offset 5 or after/);
});

test('streams append with a producer appends a batch once however often it is retried', async (t) => {
  const cluster = await startStreamCluster(t);
  await runBaton(['streams', 'create', 'orders'], { cwd, env: cluster.env });
  await cluster.writable('orders');
  const args = ['streams', 'append', 'orders', 'order-1', '--producer', 'importer', '--seq', '7'];
  const first = await runBaton(args, { cwd, env: cluster.env });
  t.is(first.code, ExitCode.Ok, first.stderr);
  t.regex(first.stdout, /next --seq for producer importer: 8/);
  const retry = await runBaton(args, { cwd, env: cluster.env });
  t.is(retry.code, ExitCode.Ok, retry.stderr);
  t.regex(retry.stdout, /were not appended again/);
  const read = await runBaton(['streams', 'read', 'orders', '--json'], { cwd, env: cluster.env });
  t.deepEqual((JSON.parse(read.stdout) as { records: unknown[] }).records, [
    { offset: 0, body: 'order-1' },
  ]);
});

test('streams append with nothing to append, or --seq without --producer, is a usage error', async (t) => {
  const cluster = await startStreamCluster(t);
  const empty = await runBaton(['streams', 'append', 'events'], { cwd, env: cluster.env });
  t.is(empty.code, ExitCode.Usage);
  t.regex(
    empty.stderr,
    /nothing to append: give record bodies as arguments or pipe lines on stdin/,
  );
  const seq = await runBaton(['streams', 'append', 'events', 'x', '--seq', '1'], {
    cwd,
    env: cluster.env,
  });
  t.is(seq.code, ExitCode.Usage);
  t.regex(seq.stderr, /give --producer too/);
});

test('streams status shows owner, epoch, state and tail, as text or JSON', async (t) => {
  const cluster = await startStreamCluster(t);
  await runBaton(['streams', 'create', 'events'], { cwd, env: cluster.env });
  await cluster.writable('events');
  await runBaton(['streams', 'append', 'events', 'a', 'b', 'c'], { cwd, env: cluster.env });
  const human = await runBaton(['streams', 'status', 'events'], { cwd, env: cluster.env });
  t.is(human.code, ExitCode.Ok, human.stderr);
  t.regex(human.stdout, new RegExp(`owner\\s+n1 \\(${cluster.url.replace(/\./g, '\\.')}\\)`));
  t.regex(human.stdout, /epoch\s+1 \(open\)/);
  t.regex(human.stdout, /tail\s+3/);
  t.regex(human.stdout, /transfer\s+none/);
  const json = await runBaton(['streams', 'status', 'events', '--json'], { cwd, env: cluster.env });
  t.like(JSON.parse(json.stdout), {
    stream: 'events',
    owner: 'n1',
    epoch: 1,
    state: 'open',
    tail: 3,
  });
});

test('a refused command exits 1 with the server reason: unknown stream, unknown owner', async (t) => {
  const cluster = await startStreamCluster(t);
  const status = await runBaton(['streams', 'status', 'nowhere'], { cwd, env: cluster.env });
  t.is(status.code, ExitCode.Failed);
  t.regex(status.stderr, /^baton: http:\/\/127\.0\.0\.1:\d+ refused \(404\): .*nowhere/);
  // The advice names the command that fixes it, not the HTTP route behind it.
  const append = await runBaton(['streams', 'append', 'nowhere', 'x'], { cwd, env: cluster.env });
  t.is(append.code, ExitCode.Failed);
  t.regex(append.stderr, /create it with "baton streams create nowhere"/);
  t.notRegex(append.stderr + status.stderr, /\/v1\//);
  const create = await runBaton(['streams', 'create', 'events', '--owner', 'n9', '--json'], {
    cwd,
    env: cluster.env,
  });
  t.is(create.code, ExitCode.Failed);
  t.is(create.stdout, '');
  const { error } = JSON.parse(create.stderr) as { error: { code: string; message: string } };
  t.is(error.code, 'rejected-unknown-node');
  t.regex(error.message, /node n9 is not registered/);
});

test('an admin command without a token is refused (exit 1) and says how to give one', async (t) => {
  const cluster = await startStreamCluster(t);
  const run = await runBaton(['streams', 'nodes', '--url', cluster.url], { cwd });
  t.is(run.code, ExitCode.Failed);
  t.regex(run.stderr, /refused \(401\): .*\(give a token with --token or BATON_TOKEN\)/);
});

test('flags win over BATON_URL and BATON_TOKEN', async (t) => {
  const cluster = await startStreamCluster(t);
  const port = await closedPort();
  const run = await runBaton(
    ['streams', 'nodes', '--url', cluster.url, '--token', STREAM_TOKEN, '--json'],
    {
      cwd,
      env: { BATON_URL: `http://127.0.0.1:${port}`, BATON_TOKEN: 'wrong' },
    },
  );
  t.is(run.code, ExitCode.Ok, run.stderr);
  t.is((JSON.parse(run.stdout) as { nodes: unknown[] }).nodes.length, 1);
});

test('a node that cannot be reached exits 3 naming its address', async (t) => {
  const port = await closedPort();
  const run = await runBaton(['streams', 'status', 'events', '--url', `http://127.0.0.1:${port}`], {
    cwd,
  });
  t.is(run.code, ExitCode.Unreachable);
  t.regex(
    run.stderr,
    new RegExp(`^baton: cannot reach http://127\\.0\\.0\\.1:${port}: connection refused`),
  );
});

test('usage errors exit 2 before any request: a bad number, a bad --url, a missing argument', async (t) => {
  const limit = await runBaton(['streams', 'read', 'events', '--limit', 'ten'], { cwd });
  t.is(limit.code, ExitCode.Usage);
  t.regex(limit.stderr, /--limit.*"ten" is not a whole number.*baton streams read --help/);
  const url = await runBaton(['streams', 'nodes', '--url', 'localhost:7700'], { cwd });
  t.is(url.code, ExitCode.Usage);
  t.regex(url.stderr, /--url "?localhost:7700"? is not (a URL|an http\(s\) address)/);
  const missing = await runBaton(['streams', 'create'], { cwd });
  t.is(missing.code, ExitCode.Usage);
  t.regex(missing.stderr, /missing required argument 'name'/);
});

test('the executable appends from a pipe and reads back, with the node from BATON_URL', async (t) => {
  const cluster = await startStreamCluster(t);
  await runBaton(['streams', 'create', 'events'], { cwd, env: cluster.env });
  await cluster.writable('events');
  const append = await spawnBaton(['streams', 'append', 'events'], {
    env: cluster.env,
    stdin: 'alpha\nbeta\n',
  });
  t.is(append.code, ExitCode.Ok, append.stderr);
  t.regex(append.stdout, /appended 2 records to events: offsets 0-1/);
  const read = await spawnBaton(['streams', 'read', 'events', '--json'], { env: cluster.env });
  t.is(read.code, ExitCode.Ok, read.stderr);
  t.deepEqual(
    (JSON.parse(read.stdout) as { records: { body: string }[] }).records.map((r) => r.body),
    ['alpha', 'beta'],
  );
});

test('streams append sends stdin in batches the API accepts, numbering a producer batch by batch', async (t) => {
  const cluster = await startStreamCluster(t);
  await runBaton(['streams', 'create', 'bulk'], { cwd, env: cluster.env });
  await cluster.writable('bulk');
  const lines = Array.from({ length: 2500 }, (_, i) => `r${i}`);
  const run = await runBaton(
    ['streams', 'append', 'bulk', '--producer', 'loader', '--seq', '10', '--json'],
    {
      cwd,
      env: cluster.env,
      stdin: pipedInput(`${lines.join('\n')}\n`),
    },
  );
  t.is(run.code, ExitCode.Ok, run.stderr);
  const result = JSON.parse(run.stdout) as {
    appended: number;
    last: number;
    nextSeq: number;
    batches: { count: number }[];
  };
  t.deepEqual(
    result.batches.map((b) => b.count),
    [1000, 1000, 500],
  );
  t.like(result, { appended: 2500, last: 2499, nextSeq: 13 });
  const tail = await runBaton(['streams', 'read', 'bulk', '--from', '2498', '--json'], {
    cwd,
    env: cluster.env,
  });
  t.deepEqual((JSON.parse(tail.stdout) as { records: unknown[] }).records, [
    { offset: 2498, body: 'r2498' },
    { offset: 2499, body: 'r2499' },
  ]);
  const all = await runBaton(['streams', 'read', 'bulk', '--limit', '2500', '--json'], {
    cwd,
    env: cluster.env,
  });
  t.is(
    (JSON.parse(all.stdout) as { records: unknown[] }).records.length,
    2500,
    'reads page past the API limit',
  );
});

test('--url and --token are accepted before the subcommand, as --json is', async (t) => {
  const cluster = await startStreamCluster(t);
  const run = await runBaton(['--url', cluster.url, '--token', cluster.env.BATON_TOKEN!, '--json', 'streams', 'nodes'], { cwd });
  t.is(run.code, ExitCode.Ok, run.stderr);
  t.deepEqual(
    (JSON.parse(run.stdout) as { nodes: { id: string }[] }).nodes.map((n) => n.id),
    ['n1'],
  );
  // Given after the subcommand too, the nearer one wins.
  const both = await runBaton(['--url', 'http://127.0.0.1:9', 'streams', 'nodes', '--url', cluster.url], {
    cwd,
    env: { BATON_TOKEN: cluster.env.BATON_TOKEN },
  });
  t.is(both.code, ExitCode.Ok, both.stderr);
});

test('a wrong token is refused on a read too (exit 1), not silently ignored; a read without a token is refused and says how to give one', async (t) => {
  const cluster = await startStreamCluster(t);
  await runBaton(['streams', 'create', 'events'], { cwd, env: cluster.env });
  const run = await runBaton(['streams', 'read', 'events', '--token', 'not-the-token'], {
    cwd,
    env: { BATON_URL: cluster.url },
  });
  t.is(run.code, ExitCode.Failed);
  t.regex(run.stderr, /refused \(401\): the bearer token is not recognised/);
  const anonymous = await runBaton(['streams', 'read', 'events'], { cwd, env: { BATON_URL: cluster.url } });
  t.is(anonymous.code, ExitCode.Failed, 'the data API takes no anonymous caller');
  t.regex(anonymous.stderr, /refused \(401\): .*stream:read.*\(give a token with --token or BATON_TOKEN\)/);
});

test('an address nothing can be fetched from is reported as unreachable in words, exit 3', async (t) => {
  for (const url of ['http://127.0.0.1:1', 'http://127.0.0.1:9']) {
    const run = await runBaton(['--url', url, 'streams', 'nodes'], { cwd });
    t.is(run.code, ExitCode.Unreachable);
    t.regex(run.stderr, new RegExp(`^baton: cannot reach ${url.replace(/[.]/g, '\\.')}: \\w`));
    t.notRegex(run.stderr, /fetch failed/);
  }
});
