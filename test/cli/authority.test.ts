import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import {
  ADMIN,
  READER,
  startNode,
  tokens,
  type NodeOverrides,
} from '../hosts/authority-node/node-harness.js';
import { freeLoopbackPort } from '@baton/conformance/internal/servers/server-process.js';
import { eventually } from '../hosts/eventually.js';
import { closedPort } from './closed-port.js';
import { BATON_MAIN, runBaton, spawnBaton } from './run-baton.js';

const cwd = process.cwd();

const TRANSFER = ['--from', 'east', '--to', 'west', '--reason', 'drain east'];

type Node = Awaited<ReturnType<typeof startNode>>;

/**
 * A real authority node (mode ha, one voter, scripted catch-up probe) on loopback port 0. It
 * runs in a fresh working directory: whatever the node keeps on disk under relative paths stays
 * out of the checkout and away from the other tests' nodes. Hence the tests run one at a time.
 */
async function node(t: ExecutionContext, overrides: NodeOverrides = {}): Promise<Node> {
  const home = process.cwd();
  const dir = await mkdtemp(join(tmpdir(), 'baton-cli-authority-'));
  process.chdir(dir);
  t.teardown(async () => {
    process.chdir(home);
    await rm(dir, { recursive: true, force: true });
  });
  const started = await startNode(overrides);
  t.teardown(() => started.host.stop());
  return started;
}

/** Gives `authority` a home with the raw command, as a failover or an initial placement would. */
async function establish(n: Node, authority = 'proj', home = 'east'): Promise<void> {
  const res = await n.call('POST', '/availability/v1/commands', {
    token: ADMIN,
    body: { type: 'transfer_authority', authority, target: home },
  });
  if (res.status !== 200)
    throw new Error(`establish answered ${res.status}: ${JSON.stringify(res.body)}`);
}

function baton(n: Node, args: readonly string[], token = ADMIN) {
  return runBaton(['authority', ...args], {
    cwd,
    env: { BATON_URL: n.control, BATON_TOKEN: token },
  });
}

test.serial(
  'authority transfer commits once the target caught up and prints the sealed audit',
  async (t) => {
    const n = await node(t);
    await establish(n);
    n.probe.answer('west', 0);
    const run = await baton(n, ['transfer', 'proj', ...TRANSFER, '--key', '5f0c-drain-proj']);
    t.is(run.code, ExitCode.Ok, run.stderr);
    const lines = run.stdout.trimEnd().split('\n');
    t.is(lines[0], 'committed: proj moved from east to west at epoch 2');
    t.regex(
      run.stdout,
      /id\s+5f0c-drain-proj\n\s+actor\s+olivia\n\s+reason\s+drain east\n\s+barrier\s+0\n\s+epoch\s+2\n\s+commit\s+term \d+, index \d+\n/,
    );
    t.like(await n.audit.byId('5f0c-drain-proj'), { authority: 'proj', target: 'west', epoch: 2 });
  },
);

test.serial(
  'authority transfer --json prints the audit record; a retry with the same key answers the same, no second move',
  async (t) => {
    const n = await node(t);
    await establish(n);
    n.probe.answer('west', 0);
    const args = ['transfer', 'proj', ...TRANSFER, '--key', 'k-1', '--json'];
    const first = await baton(n, args);
    t.is(first.code, ExitCode.Ok, first.stderr);
    const record = JSON.parse(first.stdout) as Record<string, unknown>;
    // The seed's fields, and what every record of an authority's trail adds: its kind, subject,
    // epoch before, time and hash-chain links.
    t.deepEqual(Object.keys(record).sort(), [
      'actor',
      'authority',
      'barrier',
      'commit_index',
      'commit_term',
      'epoch',
      'epoch_before',
      'hash',
      'id',
      'kind',
      'prev_hash',
      'reason',
      'source',
      'subject',
      'subject_type',
      'target',
      'time',
    ]);
    t.like(record, { kind: 'planned_transfer', subject_type: 'authority', subject: 'proj', epoch_before: 1, epoch: 2 });
    const retry = await baton(n, args);
    t.is(retry.code, ExitCode.Ok, retry.stderr);
    t.deepEqual(JSON.parse(retry.stdout), record);
    t.like((await n.call('GET', '/availability/v1/authorities/proj', { token: READER })).body, {
      home: 'west',
      epoch: 2,
    });
  },
);

test.serial('--not-before schedules the transfer: the command answers at once that it is registered, and a cancel calls it off', async (t) => {
  const n = await node(t);
  await establish(n);
  const start = new Date(Date.now() + 3600_000).toISOString(); // clock-ok: the node runs on the system clock
  const run = await baton(n, ['transfer', 'proj', ...TRANSFER, '--key', 'tonight', '--not-before', start]);
  t.is(run.code, ExitCode.Ok, run.stderr);
  t.is(run.stdout.trim(), `scheduled: transfer tonight of proj from east to west is registered and starts at ${start} ("baton authority cancel proj" calls it off)`);
  t.like(n.consensus.view().state.transfers.get('proj'), { id: 'tonight', notBefore: Date.parse(start) });
  const cancelled = await baton(n, ['cancel', 'proj']);
  t.is(cancelled.code, ExitCode.Ok, cancelled.stderr);
  const bad = await baton(n, ['transfer', 'proj', ...TRANSFER, '--not-before', 'tonight']);
  t.is(bad.code, ExitCode.Usage);
  t.regex(bad.stderr, /--not-before.*"tonight" is not an ISO 8601 time with a zone/);
});

test.serial('without --key the command chooses one, and the audit carries it', async (t) => {
  const n = await node(t);
  await establish(n);
  n.probe.answer('west', 0);
  const run = await baton(n, ['transfer', 'proj', ...TRANSFER, '--json']);
  t.is(run.code, ExitCode.Ok, run.stderr);
  const { id } = JSON.parse(run.stdout) as { id: string };
  t.regex(id, /^cli-[0-9a-f-]{36}$/);
  t.truthy(await n.audit.byId(id));
});

test.serial(
  'a 504 says the target had not caught up, that nothing moved, and how to retry with the same key',
  async (t) => {
    const n = await node(t, { transfers: { budgetMs: 200 } });
    await establish(n);
    n.probe.unreachable('west');
    const run = await baton(n, ['transfer', 'proj', ...TRANSFER, '--key', 'k-504']);
    t.is(run.code, ExitCode.Failed);
    t.regex(
      run.stderr,
      /the target west had not caught up .*within the node's budget: nothing moved and no audit was written/,
    );
    t.regex(
      run.stderr,
      /retry with the same key: baton authority transfer proj --from east --to west --reason 'drain east' --key k-504\n$/,
    );
    const json = await baton(n, ['transfer', 'proj', ...TRANSFER, '--key', 'k-504', '--json']);
    t.is(JSON.parse(json.stderr).error.code, 'target_not_caught_up');
  },
);

test.serial(
  'a second transfer while one runs is refused at once with why (no waiting note); cancel calls the first off, which then reports it',
  async (t) => {
    const n = await node(t);
    await establish(n);
    n.probe.hang('west');
    const first = baton(n, ['transfer', 'proj', ...TRANSFER, '--key', 'k-first']);
    await n.probe.whenProbed(1);

    const second = await baton(n, ['transfer', 'proj', ...TRANSFER, '--key', 'k-second']);
    t.is(second.code, ExitCode.Failed);
    t.regex(
      second.stderr,
      /^baton: refused: .*proj.*See it with "baton authority status proj", or call it off with "baton authority cancel proj"\n$/,
    );

    const status = await baton(n, ['status', 'proj'], READER);
    t.is(status.code, ExitCode.Ok, status.stderr);
    t.regex(
      status.stdout,
      /^proj: home east, epoch 1\n\s+transfer\s+k-first: east -> west, AwaitingCatchUp\n\s+barrier\s+0, target at no reading yet/,
    );
    t.regex(status.stdout, /by\s+olivia: drain east/);

    const cancel = await baton(n, ['cancel', 'proj']);
    t.is(cancel.code, ExitCode.Ok, cancel.stderr);
    t.is(
      cancel.stdout,
      'cancelled: the transfer of proj was called off before it committed; nothing moved\n',
    );

    const outcome = await first;
    t.is(outcome.code, ExitCode.Failed);
    t.regex(
      outcome.stderr,
      /refused: transfer k-first of proj was cancelled before it committed; nothing moved\. Start it again with a new key if it is still wanted/,
    );
    t.is(await n.audit.byId('k-first'), undefined);
  },
);

test.serial(
  'cancel of a committed transfer says the move stands; of an unknown authority, no transfer (both exit 1)',
  async (t) => {
    const n = await node(t);
    await establish(n);
    n.probe.answer('west', 0);
    t.is((await baton(n, ['transfer', 'proj', ...TRANSFER])).code, ExitCode.Ok);
    const committed = await baton(n, ['cancel', 'proj']);
    t.is(committed.code, ExitCode.Failed);
    t.regex(committed.stderr, /^baton: already committed: the move stands \(/);
    const none = await baton(n, ['cancel', 'other', '--json']);
    t.is(none.code, ExitCode.Failed);
    const { error } = JSON.parse(none.stderr) as { error: { code: string; message: string } };
    t.is(error.code, 'no_transfer');
    t.regex(error.message, /^no transfer: no transfer of other is registered or committed/);
  },
);

test.serial(
  'authority status shows the home with no transfer in flight, as JSON too; an unknown authority exits 1',
  async (t) => {
    const n = await node(t);
    await establish(n);
    const human = await baton(n, ['status', 'proj'], READER);
    t.is(human.code, ExitCode.Ok, human.stderr);
    t.is(human.stdout, 'proj: home east, epoch 1\n  no transfer in flight\n');
    const json = await baton(n, ['status', 'proj', '--json'], READER);
    t.deepEqual(JSON.parse(json.stdout), {
      authority: 'proj',
      home: 'east',
      epoch: 1,
      transfer: null,
    });
    const unknown = await baton(n, ['status', 'nothing'], READER);
    t.is(unknown.code, ExitCode.Failed);
    t.regex(
      unknown.stderr,
      /nothing has no home and no transfer in flight on http:\/\/127\.0\.0\.1:\d+/,
    );
  },
);

test.serial(
  'authority members lists the roster with the tracker state of each member',
  async (t) => {
    const n = await node(t);
    const run = await baton(n, ['members'], READER);
    t.is(run.code, ExitCode.Ok, run.stderr);
    const [header, ...rows] = run.stdout.trimEnd().split('\n');
    t.regex(header, /^MEMBER\s+DATACENTER\s+STATE\s+LAST HEARD$/);
    t.regex(
      rows.find((r) => r.startsWith('east-1'))!,
      /^east-1\s+east\s+Alive\s+0\.0 s ago$/,
    );
    t.regex(
      rows.find((r) => r.startsWith('west-1'))!,
      /^west-1\s+west\s+\w+\s+/,
    );
    const json = await baton(n, ['members', '--json'], READER);
    const { members } = JSON.parse(json.stdout) as {
      members: { member: string; datacenter: string }[];
    };
    t.deepEqual(members.map((m) => `${m.member}@${m.datacenter}`).sort(), [
      'east-1@east',
      'west-1@west',
    ]);
  },
);

test.serial('a token without the write scope is refused and told so', async (t) => {
  const n = await node(t);
  const run = await baton(n, ['transfer', 'proj', ...TRANSFER], READER);
  t.is(run.code, ExitCode.Failed);
  t.regex(run.stderr, /refused \(403\): .*\(this token lacks the scope\)/);
});

test.serial('a node in mode dc refuses transfers with its reason', async (t) => {
  const n = await node(t, { mode: 'dc' });
  const run = await baton(n, ['transfer', 'proj', ...TRANSFER]);
  t.is(run.code, ExitCode.Failed);
  t.regex(run.stderr, /refused \(503\): this node runs in mode dc/);
});

test.serial(
  'an unreachable control listener exits 3 naming it; a transfer adds how to retry safely',
  async (t) => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}`;
    const members = await runBaton(['authority', 'members', '--url', url], { cwd });
    t.is(members.code, ExitCode.Unreachable);
    t.regex(
      members.stderr,
      new RegExp(`^baton: cannot reach ${url.replace(/\./g, '\\.')}: connection refused`),
    );
    const transfer = await runBaton(
      ['authority', 'transfer', 'proj', ...TRANSFER, '--key', 'k9', '--url', url, '--json'],
      { cwd },
    );
    t.is(transfer.code, ExitCode.Unreachable);
    const { error } = JSON.parse(transfer.stderr) as { error: { code: string; message: string } };
    t.is(error.code, 'unreachable');
    t.regex(
      error.message,
      /reissue it with the same key \(it never moves twice\): baton authority transfer proj .* --key k9$/,
    );
  },
);

test.serial(
  'a transfer that outlives --timeout exits 3 saying it goes on at the node, not that the node is unreachable',
  async (t) => {
    const n = await node(t);
    await establish(n);
    // west never reports a frontier: the transfer waits at AwaitingCatchUp past the CLI's wait.
    const run = await baton(n, [
      'transfer',
      'proj',
      ...TRANSFER,
      '--key',
      'k-slow',
      '--timeout',
      '1',
      '--json',
    ]);
    t.is(run.code, ExitCode.Unreachable);
    const { error } = JSON.parse(run.stderr) as { error: { code: string; message: string } };
    t.is(error.code, 'no_answer_in_time');
    t.notRegex(error.message, /cannot reach/);
    t.regex(error.message, /gave no answer within 1000 ms; the transfer goes on at the node/);
    t.regex(error.message, /"baton authority cancel proj"/);
    const status = await baton(n, ['status', 'proj']);
    t.is(status.code, ExitCode.Ok, status.stderr);
    t.regex(status.stdout, /k-slow: east -> west, AwaitingCatchUp/);
  },
);

test.serial('usage errors exit 2: a missing --reason, an invalid --key', async (t) => {
  const reason = await runBaton(
    ['authority', 'transfer', 'proj', '--from', 'east', '--to', 'west'],
    { cwd },
  );
  t.is(reason.code, ExitCode.Usage);
  t.regex(reason.stderr, /required option '--reason <text>' not specified/);
  const key = await runBaton(['authority', 'transfer', 'proj', ...TRANSFER, '--key', 'has space'], {
    cwd,
  });
  t.is(key.code, ExitCode.Usage);
  t.regex(key.stderr, /--key "has space" is not a valid idempotency key/);
});

test.serial(
  'authority audit lists the records the node serves, newest first, as text or JSON, a page at a time',
  async (t) => {
    // A server answering the route's documented shape (GET
    // /availability/v1/authorities/{authority}/audit?limit=N&before=I) stands in for a node, so
    // the records need no committed transfers; the route itself is tested in http-api.test.ts.
    const records = [3, 2, 1].map((epoch) => ({
      id: `k${epoch}`,
      authority: 'proj',
      source: epoch === 2 ? 'west' : 'east',
      target: epoch === 2 ? 'east' : 'west',
      actor: 'olivia',
      reason: `move ${epoch}`,
      barrier: 10 * epoch,
      epoch,
      commit_term: 1,
      commit_index: 100 + epoch,
    }));
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization}`);
      const match = /^\/availability\/v1\/authorities\/([^/]+)\/audit\?limit=(\d+)(?:&before=(\d+))?$/.exec(req.url ?? '');
      const older = records.filter((r) => match?.[3] === undefined || r.commit_index < Number(match[3]));
      const page = older.slice(0, Number(match?.[2]));
      const next = older.length > page.length ? page[page.length - 1].commit_index : null;
      res.writeHead(match ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(match ? { authority: 'proj', records: page, next } : {}));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const human = await runBaton(['authority', 'audit', 'proj', '--url', url, '--token', READER], { cwd });
    t.is(human.code, ExitCode.Ok, human.stderr);
    // Records sealed before kinds existed (these carry none) read as planned transfers.
    t.regex(human.stdout, /^planned_transfer: east -> west at epoch 3\n\s+id\s+k3\n[\s\S]*\n\nplanned_transfer: west -> east at epoch 2\n\s+id\s+k2\n[\s\S]*\n\nplanned_transfer: east -> west at epoch 1\n/);
    t.notRegex(human.stdout, /older records/, 'the last page names no older one');
    t.deepEqual(seen, [`GET /availability/v1/authorities/proj/audit?limit=20 Bearer ${READER}`]);

    // A page of two names the command for the older records, which answers the rest.
    const first = await runBaton(['authority', 'audit', 'proj', '--limit', '2', '--url', url], { cwd });
    t.is(first.code, ExitCode.Ok, first.stderr);
    t.regex(first.stdout, /\n\nolder records: baton authority audit proj --limit 2 --before 102\n$/);
    const older = await runBaton(['authority', 'audit', 'proj', '--limit', '2', '--before', '102', '--url', url, '--json'], { cwd });
    t.deepEqual(JSON.parse(older.stdout), { authority: 'proj', records: [records[2]], next: null });
    const json = await runBaton(['authority', 'audit', 'proj', '--limit', '1', '--url', url, '--json'], { cwd });
    t.deepEqual(JSON.parse(json.stdout), { authority: 'proj', records: [records[0]], next: 103 });
    const none = await runBaton(['authority', 'audit', 'proj', '--before', '101', '--url', url], { cwd });
    t.is(none.stdout.trim(), 'proj has no audit records before commit index 101');
    for (const bad of [['--before', '-1'], ['--before', 'x'], ['--limit', '1001']]) {
      const refused = await runBaton(['authority', 'audit', 'proj', ...bad, '--url', url], { cwd });
      t.is(refused.code, ExitCode.Usage, `${bad.join(' ')}: ${refused.stderr}`);
    }
  },
);

test.serial('authority audit against a node without audit reads says so (exit 1)', async (t) => {
  const server = createServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'application/problem+json' });
    res.end(
      JSON.stringify({
        type: 'urn:baton:problem:not-found',
        status: 404,
        detail: 'nothing is served here',
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const run = await runBaton(['authority', 'audit', 'proj', '--url', url], { cwd });
  t.is(run.code, ExitCode.Failed);
  t.regex(
    run.stderr,
    /does not serve audit reads: this node predates them/,
  );
});

test.serial(
  'the executable reads the members of a node given by BATON_URL and BATON_TOKEN',
  async (t) => {
    const n = await node(t);
    const run = await spawnBaton(['authority', 'members', '--json'], {
      env: { BATON_URL: n.control, BATON_TOKEN: READER },
    });
    t.is(run.code, ExitCode.Ok, run.stderr);
    t.is((JSON.parse(run.stdout) as { members: unknown[] }).members.length, 2);
  },
);

/** Reads the authority's home (admin:read) and writes to it (authority:write). */
const OPERATOR = 'operator-token';

/** A node whose roster names its own public server, so the CLI can find the home member's address. */
async function nodeReachedAtItsPublicServer(t: ExecutionContext): Promise<Node> {
  const port = await freeLoopbackPort();
  return node(t, {
    publicPort: port,
    node: { tokens: [...tokens, { token: OPERATOR, principal: 'olivia', scopes: ['admin:write', 'admin:read', 'authority:write'] }] },
    roster: {
      east: { members: { 'east-1': { public: `http://127.0.0.1:${port}` } } },
      west: { members: { 'west-1': { public: 'http://127.0.0.1:9' } } },
    },
  });
}

test.serial(
  'authority create gives an authority its first home at epoch 1; again, it says where it lives; a home outside the roster is a usage error',
  async (t) => {
    const n = await node(t);
    const created = await baton(n, ['create', 'docs', '--home', 'west']);
    t.is(created.code, ExitCode.Ok, created.stderr);
    t.is(created.stdout, 'created docs in west (epoch 1)\n');
    t.like(n.consensus.view().state.authorities.get('docs'), { home: 'west', epoch: 1 });

    const again = await baton(n, ['create', 'docs', '--home', 'east']);
    t.is(again.code, ExitCode.Failed);
    t.is(
      again.stderr,
      'baton: docs already exists: its home is west (epoch 1); move it with "baton authority transfer docs --from west --to DATACENTER --reason ..."\n',
    );
    t.like(n.consensus.view().state.authorities.get('docs'), { home: 'west', epoch: 1 });

    const nowhere = await baton(n, ['create', 'other', '--home', 'south']);
    t.is(nowhere.code, ExitCode.Usage);
    t.is(nowhere.stderr, 'baton: --home south is no datacenter of the roster: choose east, west\n');
    t.is(n.consensus.view().state.authorities.get('other'), undefined);
  },
);

test.serial(
  "authority write sends each operation to the home member's public server under the current epoch; a planned transfer then waits for the target to reach them, saying so",
  async (t) => {
    const n = await nodeReachedAtItsPublicServer(t);
    t.is((await baton(n, ['create', 'proj', '--home', 'east'])).code, ExitCode.Ok);
    const wrote = await baton(n, ['write', 'proj', 'publish 1.0.0', 'publish 1.0.1'], OPERATOR);
    t.is(wrote.code, ExitCode.Ok, wrote.stderr);
    t.is(wrote.stdout, 'wrote 2 operations to proj at east-1 (east, epoch 1): serials 1-2\n');

    // west reports nothing until told: the transfer waits at the barrier the writes raised.
    n.probe.unreachable('west');
    const child = spawn(process.execPath, [BATON_MAIN, 'authority', 'transfer', 'proj', ...TRANSFER, '--key', 'k-barrier'], {
      env: { ...process.env, BATON_URL: n.control, BATON_TOKEN: ADMIN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    t.teardown(() => child.kill());
    await eventually(() => stderr.includes('\n'), 'the command to say it waits');
    t.regex(stderr, /^transfer k-barrier: waiting for west to catch up to barrier 2 \(at no reading yet\)/);
    n.probe.answer('west', 2);
    t.is(await exited, ExitCode.Ok, stderr);
    t.regex(stdout, /barrier\s+2\n/);
    t.like(await n.audit.byId('k-barrier'), { barrier: 2, epoch: 2 });

    // The home moved: east refuses a write now, and the command says where to look.
    const stale = await baton(n, ['write', 'proj', 'late', '--public-url', n.publicUrl], OPERATOR);
    t.is(stale.code, ExitCode.Failed);
    t.regex(stale.stderr, /proj lives in west, not east.*See where it lives with "baton authority status proj"/);
  },
);

test.serial(
  'authority write to an authority without a home exits 1 naming the command that creates it; an empty operation is a usage error',
  async (t) => {
    const n = await node(t);
    const run = await baton(n, ['write', 'ghost', 'x']);
    t.is(run.code, ExitCode.Failed);
    t.is(
      run.stderr,
      'baton: ghost has no home yet: create it with "baton authority create ghost --home DATACENTER"\n',
    );
    const empty = await baton(n, ['write', 'ghost', '']);
    t.is(empty.code, ExitCode.Usage);
  },
);

test.serial('authority list shows authorities by id a page at a time and names the next page', async (t) => {
  const n = await node(t);
  for (const name of ['proj', 'docs', 'app']) await establish(n, name, name === 'docs' ? 'west' : 'east');
  const first = await baton(n, ['list', '--limit', '2'], READER);
  t.is(first.code, ExitCode.Ok, first.stderr);
  const lines = first.stdout.trimEnd().split('\n');
  t.regex(lines[0], /^AUTHORITY\s+HOME\s+EPOCH$/);
  t.regex(lines[1], /^app\s+east\s+1$/);
  t.regex(lines[2], /^docs\s+west\s+1$/);
  t.is(lines[3], '2 shown of 3 authorities; next page: baton authority list --limit 2 --after docs');
  const rest = await baton(n, ['list', '--after', 'docs', '--json'], READER);
  t.is(rest.code, ExitCode.Ok, rest.stderr);
  t.deepEqual(JSON.parse(rest.stdout), { authorities: [{ authority: 'proj', home: 'east', epoch: 1, catch_up: null }], next: null, total: 3 });
  // A page larger than the listener serves is a usage error, refused before any request.
  const bad = await baton(n, ['list', '--limit', '5000'], READER);
  t.is(bad.code, ExitCode.Usage);
  t.regex(bad.stderr, /--limit.*at most 1000/);
});
