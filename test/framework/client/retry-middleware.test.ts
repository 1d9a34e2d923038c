import test from 'ava';
import { authorityPublicClient, streamNodeClient } from '@baton/client/internal/clients.js';

/** A fetch that answers from a script and records each request it was sent, body included. */
function scripted(answers: (() => Response)[]) {
  const sent: { url: string; method: string; key: string | null; body: string }[] = [];
  const fetch = async (request: Request) => {
    sent.push({ url: request.url, method: request.method, key: request.headers.get('idempotency-key'), body: await request.text() });
    const next = answers.shift();
    if (!next) throw new Error(`unexpected request ${request.method} ${request.url}`);
    return next();
  };
  return { fetch, sent };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', ...headers } });
const appended = { stream: 's', epoch: 1, first: 0, count: 1, offsets: [0], duplicate: false, node: 'n1' };
const unavailable = (retryAfter: string) => json(503, { type: 'urn:baton:problem:append-unavailable', title: 'Service Unavailable', status: 503, detail: 'd' }, { 'retry-after': retryAfter });
const append = { params: { path: { stream: 's' } }, body: { records: [{ body: 'a' }] } };

test('a 503 with Retry-After is waited out and sent again, the same body under the same Idempotency-Key', async (t) => {
  const { fetch, sent } = scripted([() => unavailable('2'), () => json(429, { type: 'x', title: 't', status: 429, detail: 'd' }, { 'retry-after': '1' }), () => json(200, appended)]);
  const waits: number[] = [];
  const client = streamNodeClient({ baseUrl: 'http://n2.invalid', fetch, sleep: async (ms) => void waits.push(ms), mintKey: () => 'key-1' });
  const { data, response } = await client.POST('/v1/streams/{stream}/records', append);
  t.is(response.status, 200);
  t.deepEqual(data, appended);
  t.deepEqual(waits, [2000, 1000]);
  t.deepEqual(sent.map((s) => s.key), ['key-1', 'key-1', 'key-1']);
  t.deepEqual(new Set(sent.map((s) => s.body)), new Set([JSON.stringify(append.body)]));
});

test('a key the caller gives is kept; reads carry none', async (t) => {
  const { fetch, sent } = scripted([() => json(200, appended), () => json(200, { stream: 's', from: 0, records: [], next: 0 })]);
  const client = streamNodeClient({ baseUrl: 'http://n1.invalid', fetch, mintKey: () => 'minted' });
  await client.POST('/v1/streams/{stream}/records', { ...append, headers: { 'Idempotency-Key': 'mine' } });
  await client.GET('/v1/streams/{stream}/records', { params: { path: { stream: 's' }, query: { from: 0 } } });
  t.deepEqual(sent.map((s) => [s.method, s.key]), [['POST', 'mine'], ['GET', null]]);
});

test('a Retry-After beyond the bound, or retries past maxAttempts, return the answer as it is', async (t) => {
  const long = scripted([() => unavailable('60')]);
  const waits: number[] = [];
  const first = await streamNodeClient({ baseUrl: 'http://n1.invalid', fetch: long.fetch, sleep: async (ms) => void waits.push(ms) }).POST('/v1/streams/{stream}/records', append);
  t.is(first.response.status, 503);
  t.is(first.error?.type, 'urn:baton:problem:append-unavailable');
  t.deepEqual(waits, []);
  const busy = scripted([() => unavailable('1'), () => unavailable('1'), () => unavailable('1')]);
  const second = await streamNodeClient({ baseUrl: 'http://n1.invalid', fetch: busy.fetch, sleep: async () => {}, maxAttempts: 3 }).POST('/v1/streams/{stream}/records', append);
  t.is(second.response.status, 503);
  t.is(busy.sent.length, 3);
});

test('a 409 not-owner hint is followed to the node it names, and later calls for that stream go there first', async (t) => {
  const notOwner = () =>
    json(409, { type: 'urn:baton:problem:not-owner', title: 'Conflict', status: 409, detail: 'd', stream: 's', owner: 'n1', address: 'http://n1.invalid:7400', epoch: 1, transferring: false });
  const { fetch, sent } = scripted([notOwner, () => json(200, appended), () => json(200, appended)]);
  const client = streamNodeClient({ baseUrl: 'http://n2.invalid:7410', fetch, mintKey: () => 'k' });
  t.is((await client.POST('/v1/streams/{stream}/records', append)).response.status, 200);
  t.is((await client.POST('/v1/streams/{stream}/records', append)).response.status, 200);
  t.deepEqual(sent.map((s) => s.url), [
    'http://n2.invalid:7410/v1/streams/s/records',
    'http://n1.invalid:7400/v1/streams/s/records',
    'http://n1.invalid:7400/v1/streams/s/records',
  ]);
  // A hint naming the node that answered is not followed: that would loop.
  const self = scripted([() => json(409, { type: 'urn:baton:problem:not-owner', title: 'Conflict', status: 409, detail: 'd', address: 'http://n3.invalid' })]);
  const loop = await streamNodeClient({ baseUrl: 'http://n3.invalid', fetch: self.fetch }).POST('/v1/streams/{stream}/records', append);
  t.is(loop.response.status, 409);
  t.is(self.sent.length, 1);
});

test("a 421 not-home refusal is followed to the first member of the home it names, with the same write, and later writes there go to the home first", async (t) => {
  const notHome = () =>
    json(421, { type: 'urn:baton:problem:not-home', title: 'Misdirected Request', status: 421, detail: 'd', authority: 'proj', home: 'west', home_urls: ['http://west-1.invalid:7600', 'http://west-2.invalid:7600'] });
  const written = { authority: 'proj', epoch: 2, serial: 7 };
  const { fetch, sent } = scripted([notHome, () => json(200, written), () => json(200, written)]);
  const client = authorityPublicClient({ baseUrl: 'http://east-1.invalid:7500', fetch, mintKey: () => 'k' });
  const write = { params: { path: { authority: 'proj' } }, body: { operation: 'w', epoch: 2 } };
  t.like((await client.POST('/availability/v1/authorities/{authority}/writes', write)).data, written);
  t.is((await client.POST('/availability/v1/authorities/{authority}/writes', write)).response.status, 200);
  t.deepEqual(sent.map((s) => s.url), [
    'http://east-1.invalid:7500/availability/v1/authorities/proj/writes',
    'http://west-1.invalid:7600/availability/v1/authorities/proj/writes',
    'http://west-1.invalid:7600/availability/v1/authorities/proj/writes',
  ]);
  t.is(sent[1]!.body, sent[0]!.body, 'the same write is sent to the home');
  // No home address to go to (an authority without a home): the refusal stands.
  const homeless = scripted([() => json(421, { type: 'urn:baton:problem:not-home', title: 'Misdirected Request', status: 421, detail: 'd', home: null, home_urls: [] })]);
  const refused = await authorityPublicClient({ baseUrl: 'http://east-1.invalid:7500', fetch: homeless.fetch }).POST('/availability/v1/authorities/{authority}/writes', write);
  t.is(refused.response.status, 421);
  t.is(homeless.sent.length, 1);
});

test('given several nodes, one that cannot be reached is left for the next, after a pause, with the same write; given one, the failure is the caller\'s', async (t) => {
  const sent: string[] = [];
  const fetch = async (request: Request) => {
    sent.push(`${new URL(request.url).origin} ${request.headers.get('idempotency-key')} ${await request.text()}`);
    if (request.url.startsWith('http://n1.invalid')) throw new TypeError('fetch failed');
    return json(200, appended);
  };
  const waits: number[] = [];
  const client = streamNodeClient({ baseUrl: 'http://n1.invalid', nodes: ['http://n1.invalid', 'http://n2.invalid'], fetch, sleep: async (ms) => void waits.push(ms), mintKey: () => 'k' });
  t.is((await client.POST('/v1/streams/{stream}/records', append)).response.status, 200);
  const body = JSON.stringify(append.body);
  t.deepEqual(sent, [`http://n1.invalid k ${body}`, `http://n2.invalid k ${body}`]);
  t.deepEqual(waits, [200]);
  // The stream's next call goes to the node that answered.
  await client.POST('/v1/streams/{stream}/records', append);
  t.is(sent.at(-1)!.split(' ')[0], 'http://n2.invalid');
  const alone = streamNodeClient({ baseUrl: 'http://n1.invalid', fetch, sleep: async () => {} });
  await t.throwsAsync(alone.POST('/v1/streams/{stream}/records', append), { instanceOf: TypeError, message: 'fetch failed' });
});

test('given several nodes, a 503 stream-fenced (the node lost the stream) is asked of the next node after its Retry-After', async (t) => {
  const fenced = () => json(503, { type: 'urn:baton:problem:stream-fenced', title: 'Service Unavailable', status: 503, detail: 'd' }, { 'retry-after': '1' });
  const { fetch, sent } = scripted([fenced, () => json(200, appended)]);
  const waits: number[] = [];
  const client = streamNodeClient({ baseUrl: 'http://n1.invalid', nodes: ['http://n1.invalid', 'http://n2.invalid', 'http://n3.invalid'], fetch, sleep: async (ms) => void waits.push(ms) });
  t.is((await client.POST('/v1/streams/{stream}/records', append)).response.status, 200);
  t.deepEqual(sent.map((s) => new URL(s.url).origin), ['http://n1.invalid', 'http://n2.invalid']);
  t.deepEqual(waits, [1000]);
});

test('a client that mints no keys sends a change without one unless the caller gives it', async (t) => {
  const { fetch, sent } = scripted([() => json(200, appended), () => json(200, appended)]);
  const client = streamNodeClient({ baseUrl: 'http://n1.invalid', fetch, mintKeys: false });
  await client.POST('/v1/streams/{stream}/records', append);
  await client.POST('/v1/streams/{stream}/records', { ...append, headers: { 'Idempotency-Key': 'given' } });
  t.deepEqual(sent.map((s) => s.key), [null, 'given']);
});
