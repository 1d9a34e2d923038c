import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { authorityClusterVariant } from '@baton/cli/internal/local-cluster/local-authority-cluster.js';
import { streamClusterVariant } from '@baton/cli/internal/local-cluster/local-stream-cluster.js';
import { jsonBoundsViolation } from '@baton/http/internal/json-bounds.js';
import { eventually } from '../hosts/eventually.js';
import { startNodeProcesses } from '../framework/cluster/node-processes.js';
import { call, problemTypeOf, type CallAnswer } from '../support/https-call.js';
import { peerHeaders } from '../support/peer-auth.js';

const RAFT = '/internal/raft/v1';
const CLUSTER = 'baton';

/** JSON text nested `depth` levels, built as text (JSON.stringify of such a value overflows). */
function deepJson(depth: number, inner: string): string {
  return '['.repeat(depth) + inner + ']'.repeat(depth);
}

/**
 * Any JSON value: shallow ones of every kind, ones nested past the 64-level bound (up to 5,000
 * deep), wide arrays within the bounds, and a string past the 4 MiB message bound.
 */
const anyJson = fc.oneof(
  { weight: 6, arbitrary: fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v) ?? 'null') },
  { weight: 2, arbitrary: fc.tuple(fc.jsonValue({ maxDepth: 2 }), fc.integer({ min: 65, max: 5_000 })).map(([inner, depth]) => deepJson(depth, JSON.stringify(inner) ?? 'null')) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 200_000 }).map((n) => `[${'1,'.repeat(n)}1]`) },
  { weight: 1, arbitrary: fc.constant(`"${'x'.repeat(4.5 * 1024 * 1024)}"`) },
);
const credential = fc.constantFrom('none', 'wrong', 'member');
type Credential = 'none' | 'wrong' | 'member';

/** `baton_peer_refusals_total` of one /metrics text, summed by `route reason`. */
function refusalsIn(metricsText: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const line of metricsText.split('\n')) {
    const match = /^baton_peer_refusals_total\{(.*)\} (\d+(?:\.\d+)?)$/.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries([...match[1].matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const key = `${labels.route} ${labels.reason}`;
    sums.set(key, (sums.get(key) ?? 0) + Number(match[2]));
  }
  return sums;
}

/** Counts the refusals the test saw, by `route reason`, to compare with what the member counted. */
class Tally {
  readonly seen = new Map<string, number>();
  add(route: string, reason: string): void {
    this.seen.set(`${route} ${reason}`, (this.seen.get(`${route} ${reason}`) ?? 0) + 1);
  }
  /** Every refusal seen is counted in the member's /metrics (which may count more: other traffic). */
  assertCounted(t: ExecutionContext, before: Map<string, number>, after: Map<string, number>): void {
    t.true(this.seen.size > 0, 'the property provoked refusals');
    for (const [key, count] of this.seen) {
      const counted = (after.get(key) ?? 0) - (before.get(key) ?? 0);
      t.true(counted >= count, `${key}: ${count} refused, ${counted} counted`);
    }
  }
}

function headersFor(who: Credential, member: string, secret: string): Record<string, string> {
  if (who === 'none') return {};
  if (who === 'wrong') return peerHeaders(member, 'a-guessed-secret-a-guessed-secret-a-guessed');
  return peerHeaders(member, secret);
}

/** Sends `text` to one Raft route as `who`; checks the answer and tallies the refusal. */
async function sendToRaft(base: string, route: string, text: string, who: Credential, member: string, secret: string, tally: Tally): Promise<boolean> {
  const path = `${RAFT}/${route}`;
  const headers = { ...headersFor(who, member, secret), ...(route === 'stream' ? { 'x-baton-cluster': CLUSTER, 'x-baton-from': member } : {}) };
  let answer: CallAnswer;
  try {
    answer = await call(`${base}${path}`, { method: 'POST', rawBody: route === 'stream' ? `${text}\n` : text, headers });
  } catch {
    return false; // a cut connection is no answer
  }
  if (who !== 'member') {
    if (answer.status !== 401 || problemTypeOf(answer) !== 'peer-unauthenticated') return false;
    tally.add(path, 'peer-unauthenticated');
    return true;
  }
  // A stream skips a frame that is no peer message and goes on: 204, the frame counted.
  if (route === 'stream' && answer.status === 204) {
    tally.add(path, jsonBoundsViolation(text) === undefined ? 'malformed-frame' : 'frame-json-limits');
    return true;
  }
  if (answer.status < 400 || answer.status >= 500) return false;
  tally.add(path, problemTypeOf(answer) ?? `http_${answer.status}`);
  return true;
}

test.serial('any JSON value sent to every Raft peer route of a stream member is refused (4xx) and counted in /metrics; the member keeps serving writes', async (t) => {
  t.timeout(600_000);
  const cluster = await startNodeProcesses(t, streamClusterVariant);
  const admin = { authorization: `Bearer ${cluster.token}` };
  type Report = { id: string; role: string; leader: string | null; commitIndex: number | null; appliedIndex: number };
  const report = async (url: string) => (await call(`${url}/v1/admin/cluster/member`, { headers: admin })).body as Report;
  let leader: Report | undefined;
  await eventually(async () => {
    const reports = await Promise.all(cluster.nodes.map((n) => report(n.url).catch(() => undefined)));
    leader = reports.find((r) => r?.role === 'leader');
    return leader !== undefined && reports.every((r) => r?.leader === leader!.id);
  }, 'a leader every member follows', 90_000);
  const target = cluster.nodes.find((n) => n.id === leader!.id)!;
  const peer = cluster.nodes.find((n) => n.id !== target.id)!.id;
  const secret = cluster.record.peerSecrets![peer];
  const metrics = async () => refusalsIn((await call(`${target.url}/metrics`, { headers: admin })).body as string);
  const before = await metrics();
  const tally = new Tally();
  await fc.assert(
    fc.asyncProperty(anyJson, fc.constantFrom('stream', 'messages', 'requests'), credential, async (text, route, who) => {
      const answered = await sendToRaft(target.url, route, text, who, peer, secret, tally);
      return answered && cluster.running(target.id);
    }),
    { numRuns: 60 },
  );
  tally.assertCounted(t, before, await metrics());
  t.true(cluster.nodes.every((n) => cluster.running(n.id)));
  t.false(readFileSync(target.logFile, 'utf8').includes('raft member failed'));
  // The member still takes an admin write and every member applies it.
  const created = await call(`${target.url}/v1/admin/streams`, { method: 'POST', headers: admin, body: { stream: 'after-the-property' } });
  t.is(created.status, 201);
  const commit = (await report(target.url)).commitIndex ?? 0;
  await eventually(async () => (await Promise.all(cluster.nodes.map((n) => report(n.url)))).every((r) => r.appliedIndex >= commit), 'every member to apply the write', 30_000);
});

test.serial('any JSON value sent to every peer route of an authority member (Raft, feed, applied serial) never stops it; refusals are counted; it still commits an admin command', async (t) => {
  t.timeout(600_000);
  const cluster = await startNodeProcesses(t, authorityClusterVariant);
  const admin = { authorization: `Bearer ${cluster.token}` };
  const [east, west] = cluster.nodes;
  const secret = cluster.record.peerSecrets![west.id];
  // Placed once the Raft has a leader: from then on every member is a working voter.
  await eventually(async () => {
    const placed = await call(`${east.url}/availability/v1/commands`, {
      method: 'POST',
      headers: { ...admin, 'idempotency-key': 'place-before' },
      body: { type: 'transfer_authority', authority: 'before', target: 'east' },
    }).catch(() => undefined);
    return placed?.status === 200;
  }, 'a first command committed', 90_000);
  const metrics = async () => refusalsIn((await call(`${east.url}/metrics`, { headers: admin })).body as string);
  const before = await metrics();
  const tally = new Tally();
  const feedRoute = fc.constantFrom('/availability/v1/feed', '/availability/v1/feeds/{origin}/applied');
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.tuple(fc.constant('raft' as const), anyJson, fc.constantFrom('stream', 'messages', 'requests'), credential),
        fc.tuple(fc.constant('feed' as const), fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'null'), feedRoute, credential),
      ),
      async ([kind, text, route, who]) => {
        if (kind === 'raft') return (await sendToRaft(east.publicUrl, route, text, who, west.id, secret, tally)) && cluster.running(east.id);
        // The feed routes take their input in the query and the path: any JSON text there.
        const value = encodeURIComponent(text.slice(0, 2_000));
        const url = route === '/availability/v1/feed' ? `${east.publicUrl}${route}?after=${value}&from=${value}&limit=${value}` : `${east.publicUrl}/availability/v1/feeds/${value}/applied`;
        const answer = await call(url, { headers: headersFor(who, west.id, secret) }).catch(() => undefined);
        if (!answer || answer.status >= 500) return false;
        if (who !== 'member') {
          if (answer.status !== 401) return false;
          tally.add(route, 'peer-unauthenticated');
        } else if (answer.status >= 400) {
          tally.add(route, problemTypeOf(answer) ?? `http_${answer.status}`);
        }
        return cluster.running(east.id);
      },
    ),
    { numRuns: 60 },
  );
  tally.assertCounted(t, before, await metrics());
  t.true(cluster.nodes.every((n) => cluster.running(n.id)));
  t.false(readFileSync(east.logFile, 'utf8').includes('raft member failed'));
  const after = await call(`${east.url}/availability/v1/commands`, {
    method: 'POST',
    headers: { ...admin, 'idempotency-key': 'place-after' },
    body: { type: 'transfer_authority', authority: 'after', target: 'east' },
  });
  t.is(after.status, 200, JSON.stringify(after.body));
  await eventually(async () => {
    const homes = await Promise.all(cluster.nodes.map((n) => call(`${n.url}/availability/v1/authorities/after`, { headers: admin })));
    return homes.every((h) => h.status === 200);
  }, 'every member to apply the command', 30_000);
});
