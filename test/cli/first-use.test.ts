import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { runBaton, spawnBaton } from './run-baton.js';
import { workDir } from './temp-project.js';

/** A loopback server answering with `handle`, closed after the test; its URL. */
async function fakeServer(t: ExecutionContext, handle: (request: IncomingMessage, response: ServerResponse) => void): Promise<string> {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const json = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { 'content-type': status < 400 ? 'application/json' : 'application/problem+json' });
  response.end(JSON.stringify(body));
};

test('streams --help shows no literal token to paste: it points at the context and --token-file', async (t) => {
  const run = await spawnBaton(['streams', '--help']);
  t.is(run.code, ExitCode.Ok, run.stderr);
  t.notRegex(run.stdout, /BATON_TOKEN=dev-admin-token/);
  t.notRegex(run.stdout, /BATON_TOKEN=[A-Za-z0-9]/, 'no token value at all');
  t.regex(run.stdout, /--token-file/);
});

test('new plugin offers only the contracts it can generate, and answers a known one without a template in the same words', async (t) => {
  const help = await spawnBaton(['new', 'plugin', '--help']);
  const offered = help.stdout.split('\nContracts:\n')[1].split('\nA contract is offered')[0];
  t.notRegex(offered, /consensus/, 'consensus is not listed among the contracts offered');
  t.regex(help.stdout, /Not available yet \(no plugin template\): consensus\./);
  const cwd = await workDir(t);
  const run = await runBaton(['new', 'plugin', 'acme-raft', '--contract', 'consensus'], { cwd });
  t.is(run.code, ExitCode.Usage);
  t.regex(run.stderr, /contract consensus is not available yet: this Baton has no plugin template for it/);
  const unknown = await runBaton(['new', 'plugin', 'acme-x', '--contract', 'nope'], { cwd });
  t.regex(unknown.stderr, /unknown contract "nope"/);
});

test('new host writes config/host.json, which holds the admin token, readable by its owner only (0600)', async (t) => {
  const cwd = await workDir(t);
  const run = await runBaton(['new', 'host', 'acme-node', '--variant', 'stream', '--yes'], { cwd });
  t.is(run.code, ExitCode.Ok, run.stderr);
  const config = await stat(join(cwd, 'acme-node', 'config', 'host.json'));
  t.is(config.mode & 0o777, 0o600);
  const manifest = await stat(join(cwd, 'acme-node', 'package.json'));
  t.not(manifest.mode & 0o077, 0, 'files without secrets keep the usual permissions');
});

test('authority transfer refuses a target that is no datacenter of the roster, naming them, unless --allow-unknown-target', async (t) => {
  const posted: string[] = [];
  const url = await fakeServer(t, (request, response) => {
    if (request.url === '/availability/v1/members') {
      json(response, 200, {
        members: [
          { member: 'east-1', datacenter: 'east', state: 'Alive', last_heard_ms_ago: 1 },
          { member: 'west-1', datacenter: 'west', state: 'Alive', last_heard_ms_ago: 1 },
        ],
      });
      return;
    }
    if (request.method === 'POST') posted.push(request.url ?? '');
    json(response, 409, { type: 'urn:baton:problem:transfer_in_progress', detail: 'scripted refusal', code: 'transfer_in_progress' });
  });
  const env = { BATON_URL: url, BATON_TOKEN: 't' };
  const typo = await runBaton(['authority', 'transfer', 'proj', '--from', 'east', '--to', 'wset', '--reason', 'r'], { cwd: process.cwd(), env });
  t.is(typo.code, ExitCode.Usage);
  t.regex(typo.stderr, /--to wset is no datacenter of the roster \(east, west\).*--allow-unknown-target/);
  t.deepEqual(posted, [], 'nothing was sent');
  const told = await runBaton(['authority', 'transfer', 'proj', '--from', 'east', '--to', 'wset', '--reason', 'r', '--allow-unknown-target'], { cwd: process.cwd(), env });
  t.is(told.code, ExitCode.Failed, told.stderr);
  t.deepEqual(posted, ['/availability/v1/transfers'], 'sent when told to');
});

test('authority status shows the public and the control address, labelled; a 404 from the wrong listener says which to use', async (t) => {
  const report = (id: string) => ({
    id,
    role: id === 'east-1' ? 'leader' : 'follower',
    leader: 'east-1',
    term: 2,
    commitIndex: 9,
    appliedIndex: 9,
    ready: true,
    notReady: null,
    eventLoopDelay: { p99Ms: 1, maxMs: 1 },
    recentTransfers: [],
    homesCatchingUp: { count: 0, shown: [] },
  });
  const picture = {
    variant: 'authority',
    servedBy: 'east-1',
    leader: 'east-1',
    term: 2,
    members: ['east-1', 'west-1'].map((id) => ({ id, address: `http://public-${id}`, reachable: true, liveness: 'Alive', report: report(id), error: null })),
    counts: { authorities: 1 },
    transfersInFlight: { count: 0, shown: [] },
  };
  const control = await fakeServer(t, (request, response) =>
    request.url === '/availability/v1/cluster' ? json(response, 200, picture) : json(response, 404, { title: 'Not Found' }),
  );
  const run = await runBaton(['status'], { cwd: process.cwd(), env: { BATON_URL: control, BATON_TOKEN: 't' } });
  t.is(run.code, ExitCode.Ok, run.stderr);
  t.regex(run.stdout, /\nMEMBER +PUBLIC ADDRESS +CONTROL ADDRESS +STATE/);
  t.regex(run.stdout, new RegExp(`\\neast-1 +http://public-east-1 +${control} +up \\(Alive\\)`));
  t.regex(run.stdout, /\nwest-1 +http:\/\/public-west-1 +- +up/);
  t.regex(run.stdout, /admin commands take a control address as --url/);

  const publicListener = await fakeServer(t, (_request, response) => json(response, 404, { title: 'Not Found' }));
  const wrong = await runBaton(['status', '--url', publicListener], { cwd: process.cwd(), env: { BATON_TOKEN: 't' } });
  t.is(wrong.code, ExitCode.Failed);
  t.regex(wrong.stderr, /answers 404 for the cluster picture: .*give --url that member's control listener instead/);
  const members = await runBaton(['authority', 'members', '--url', publicListener], { cwd: process.cwd(), env: { BATON_TOKEN: 't' } });
  t.is(members.code, ExitCode.Failed);
  t.regex(members.stderr, /refused \(404\).*give --url an authority member's control listener, not its public address/);
});
