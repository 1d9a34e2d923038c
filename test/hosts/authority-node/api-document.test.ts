import { peerHeaders } from '../../support/peer-auth.js';
import test from 'ava';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { assertRoutesDocumented, undocumentedResponses, type AnsweredRequest } from '@baton/http/internal/openapi-coverage.js';
import type { ApiDocument } from '@baton/http/internal/openapi.js';
import { RAFT_PEER_ROUTER } from '@baton/plugin-raft/internal/transport-http.js';
import { ADMIN, PEER, READER, WRITER, startNode, transfer } from './node-harness.js';
import { documentGaps } from '../../support/openapi-completeness.js';

type Node = Awaited<ReturnType<typeof startNode>>;

/** Every request a listener answered, by route template and status, as its metrics recorded them. */
async function answeredFromMetrics(n: Node, listener: 'control' | 'public'): Promise<AnsweredRequest[]> {
  const text = await (await n.checked(`${n.control}/metrics`)).text();
  const answered: AnsweredRequest[] = [];
  const line = /^baton_http_request_duration_seconds_count\{(.*)\} (\d+)$/;
  for (const row of text.split('\n')) {
    const match = line.exec(row);
    if (!match || Number(match[2]) === 0) continue;
    const labels = Object.fromEntries([...match[1].matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (labels.listener !== listener || labels.route === 'unmatched') continue;
    answered.push({ method: labels.method, path: labels.route, status: Number(labels.status) });
  }
  return answered;
}

function documentedOperations(document: ApiDocument): string[] {
  const paths = document.toJSON().paths as Record<string, Record<string, unknown>>;
  return Object.entries(paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
}

/** Provokes every answer the control listener gives, on a node in mode ha. */
async function exerciseControl(n: Node): Promise<void> {
  const post = (body: unknown, key?: string, token = ADMIN) => n.call('POST', '/availability/v1/transfers', { token, body, key });
  await n.call('POST', '/availability/v1/transfers', { body: transfer }); // 401
  await post(transfer, undefined, READER); // 403
  await post({ ...transfer, extra: 1 }); // 400
  await post(transfer, 'k-unknown'); // 409: no home yet
  await n.call('POST', '/availability/v1/commands', { token: ADMIN, key: 'c1', body: { type: 'transfer_authority', authority: 'proj', target: 'east' } }); // 200
  await n.call('POST', '/availability/v1/commands', { token: ADMIN, key: 'c1', body: { type: 'transfer_authority', authority: 'other', target: 'east' } }); // 422
  await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', source: 'east', target: 'west' } }); // 409: not Dead
  await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'nope' } }); // 400
  await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', source: 'east', target: 'west' }, headers: { 'if-match': '"7"' } }); // 412
  await post({ ...transfer, expected_epoch: 7 }, 'k-stale'); // 412
  n.probe.hang('west');
  const waiting = post(transfer, 'k1');
  await n.probe.whenProbed(1);
  await n.call('GET', '/availability/v1/transfers/proj', { token: READER }); // 200
  await post(transfer, 'k2'); // 409 in progress
  await post({ ...transfer, reason: 'changed' }, 'k1'); // 422
  await n.call('DELETE', '/availability/v1/transfers/proj', { token: ADMIN }); // 204
  await waiting; // 409 cancelled
  await n.call('DELETE', '/availability/v1/transfers/nobody', { token: ADMIN }); // 404
  await n.call('GET', '/availability/v1/transfers/nobody', { token: READER }); // 404
  await n.call('GET', '/availability/v1/transfers/bad%07name', { token: READER }); // 400
  n.probe.answer('west', 0);
  await post(transfer, 'k3'); // 200
  await n.call('DELETE', '/availability/v1/transfers/proj', { token: ADMIN }); // 409 committed
  await n.call('GET', '/availability/v1/authorities/proj', { token: READER }); // 200
  await n.call('PUT', '/availability/v1/authorities/proj/placement', { token: ADMIN, body: { allowedHomes: null } }); // 200
  await n.call('PUT', '/availability/v1/authorities/proj/placement', { token: ADMIN, body: { allowedHomes: ['nowhere'] } }); // 400
  await n.call('PUT', '/availability/v1/authorities/nobody/placement', { token: ADMIN, body: {} }); // 404
  await n.call('GET', '/availability/v1/authorities?limit=1', { token: READER }); // 200
  await n.call('GET', '/availability/v1/authorities?limit=0', { token: READER }); // 400
  await n.call('GET', '/availability/v1/authorities/nobody', { token: READER }); // 404
  await n.call('GET', '/availability/v1/authorities/bad%07name', { token: READER }); // 400
  await n.call('GET', '/availability/v1/members', { token: READER }); // 200
  await n.call('GET', '/availability/v1/authorities/proj/audit', { token: READER }); // 200
  await n.call('GET', '/availability/v1/authorities/bad%07name/audit', { token: READER }); // 400
  await n.call('GET', '/availability/v1/audit?subject=proj', { token: READER }); // 200
  await n.call('GET', '/availability/v1/audit?subject=proj&kind=exploded', { token: READER }); // 400
  await n.call('GET', '/availability/v1/audit/chain?subject=proj', { token: READER }); // 200
  await n.call('GET', '/availability/v1/audit/chain?subject=nobody', { token: READER }); // 400
  const [newest] = (await n.call('GET', '/availability/v1/audit?subject=proj&limit=1', { token: READER })).body.records as { id: string }[];
  await n.call('GET', `/availability/v1/audit/${newest!.id}`, { token: READER }); // 200
  await n.call('GET', '/availability/v1/audit/999999-0', { token: READER }); // 404
  await n.call('GET', '/availability/v1/audit/bad%07id', { token: READER }); // 400
  n.audit.failWith(new StoreUnavailableError('audit', 'disk gone'));
  await n.call('DELETE', '/availability/v1/transfers/gone', { token: ADMIN }); // 503
  n.audit.failWith(undefined);
  n.probe.unreachable('east');
  await post({ ...transfer, source: 'west', target: 'east' }, 'k-timeout'); // 504
  await n.checked(`${n.control}/openapi.json`);
  await n.checked(`${n.control}/livez`);
  await n.checked(`${n.control}/readyz`);
  await n.call('GET', '/availability/v1/cluster', { token: READER }); // 200
  await n.call('GET', '/availability/v1/consensus/members', { token: READER }); // 200
  await n.call('POST', '/availability/v1/consensus/members', { token: ADMIN, body: { id: 'east-1' } }); // 200: already a voter
  await n.call('POST', '/availability/v1/consensus/members', { token: ADMIN, body: { id: 'x', address: 'ftp://x' } }); // 400
  await n.call('DELETE', '/availability/v1/consensus/members/nobody', { token: ADMIN }); // 404
  await n.call('DELETE', '/availability/v1/consensus/members/east-1', { token: ADMIN }); // 409: the last voter
  await n.call('POST', '/availability/v1/consensus/leader', { token: ADMIN, body: { member: 'east-1' } }); // 200: leads already
  await n.call('POST', '/availability/v1/consensus/leader', { token: ADMIN, body: { member: 'nobody' } }); // 404
  await (await n.checked(`${n.control}/availability/v1/consensus/snapshot`, { headers: { authorization: `Bearer ${READER}` } })).text(); // 200, NDJSON
  await n.checked(`${n.control}/ui`, { redirect: 'manual' }); // 308
  await n.checked(`${n.control}/ui/`);
  await n.checked(`${n.control}/ui/app.css`);
  await n.checked(`${n.control}/ui/nope`); // 404
}

/** Provokes every answer the public listener gives. */
async function exercisePublic(n: Node): Promise<void> {
  const base = n.publicUrl;
  const west = peerHeaders('west-1');
  await n.call('GET', '/availability/v1/feed', { base }); // 401
  await n.call('GET', '/availability/v1/feed?from=east-1', { base, headers: west }); // 403
  await n.call('GET', '/availability/v1/feed?after=0', { base, headers: west }); // 200
  await n.call('GET', '/availability/v1/feed?after=-1', { base, headers: west }); // 400
  await n.call('GET', '/availability/v1/feeds/west-1/applied', { base, headers: west }); // 200
  await n.call('GET', '/availability/v1/feeds/west-1/applied', { base }); // 401
  const write = (body: unknown) => n.call('POST', '/availability/v1/authorities/proj/writes', { base, token: WRITER, body });
  await write({ operation: 'w', epoch: 3 }); // 200 (proj lives in east again, at epoch 3)
  await write({ operation: 'w', epoch: 99 }); // 409 or 421
  await write({ operation: '' }); // 400
  await n.call('POST', '/availability/v1/authorities/nobody/writes', { base, token: WRITER, body: { operation: 'w', epoch: 1 } }); // 421
  await n.call('POST', '/availability/v1/authorities/proj/writes', { base, token: PEER, body: { operation: 'w', epoch: 1 } }); // 403
  await n.call('GET', '/availability/v1/authorities/proj/ownership', { base, token: WRITER }); // 200 (JSON)
  await n.call('GET', '/availability/v1/authorities/nobody/ownership', { base, token: WRITER }); // 404
  await n.checked(`${base}/openapi.json`);
  await n.checked(`${base}/livez`);
  await n.call('GET', '/availability/v1/cluster/member', { base, token: READER }); // 200
  await n.checked(`${base}/readyz`);
  for (const route of ['stream', 'messages', 'requests']) {
    await n.checked(`${base}/internal/raft/v1/${route}`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }); // 401
  }
}

test('every route of both listeners is documented, and every answer the tests provoke keeps the published contract', async (t) => {
  // West has no running member: it is Dead at once, so the raw failover can bring proj back.
  const n = await startNode({ transfers: { budgetMs: 300 }, tracker: { suspectAfterMs: 1, deadAfterMs: 2 } });
  try {
    assertRoutesDocumented(n.node.controlApi.routers, n.node.controlApi.document);
    // The public server also carries the Raft transport's peer routes, documented as internal.
    assertRoutesDocumented([...n.node.publicApi.routers, n.host.get(RAFT_PEER_ROUTER)], n.node.publicApi.document);
    await exerciseControl(n);
    // West is the home now (k3 committed) and has no running member to freeze a planned move
    // back: fail it over so east's public server takes writes.
    await n.call('POST', '/availability/v1/commands', { token: ADMIN, key: 'k-back', body: { type: 'transfer_authority', authority: 'proj', source: 'west', target: 'east' } });
    await exercisePublic(n);

    const control = await answeredFromMetrics(n, 'control');
    const publicAnswers = await answeredFromMetrics(n, 'public');
    t.deepEqual(undocumentedResponses(control, n.node.controlApi.document), []);
    t.deepEqual(undocumentedResponses(publicAnswers, n.node.publicApi.document), []);
    const statuses = new Set(control.map((a) => a.status));
    for (const status of [200, 204, 400, 401, 403, 404, 409, 422, 503, 504]) t.true(statuses.has(status), `control answered ${status}`);
    const publicStatuses = new Set(publicAnswers.map((a) => a.status));
    for (const status of [200, 400, 401, 403, 409, 421]) t.true(publicStatuses.has(status), `public answered ${status}`);
    // Every documented operation was exercised at least once.
    const exercised = new Set([...control, ...publicAnswers].map((a) => `${a.method} ${a.path}`));
    for (const op of [...documentedOperations(n.node.controlApi.document), ...documentedOperations(n.node.publicApi.document)]) {
      if (op === 'GET /metrics') continue; // scraped above, counted after the scrape
      t.true(exercised.has(op), `${op} was exercised`);
    }
  } finally {
    await n.host.stop();
  }
});

test('both listeners serve their OpenAPI 3.1 document', async (t) => {
  const n = await startNode();
  try {
    const control = (await (await fetch(`${n.control}/openapi.json`)).json()) as { openapi: string; paths: Record<string, any> };
    t.is(control.openapi, '3.1.0');
    t.truthy(control.paths['/availability/v1/transfers'].post.responses['504']);
    t.truthy(control.paths['/availability/v1/transfers/{authority}'].delete.responses['204']);
    t.truthy(control.paths['/metrics'].get);
    const publicDoc = (await (await fetch(`${n.publicUrl}/openapi.json`)).json()) as { paths: Record<string, any> };
    t.truthy(publicDoc.paths['/availability/v1/feeds/{origin}/applied'].get);
    t.deepEqual(publicDoc.paths['/availability/v1/transfers'], undefined, 'the control API is not on the public server');
    // Complete enough to generate a client from: ids, tags, security, schemas, examples, one Problem.
    t.deepEqual(documentGaps(control), []);
    t.deepEqual(documentGaps(publicDoc as typeof control), []);
    t.like((control as any).components.schemas.Problem.properties, { running_id: { type: 'string' }, voters: { type: 'array' } });
    t.deepEqual(control.paths['/availability/v1/transfers'].post.security, [{ bearer: ['admin:write'] }]);
    t.deepEqual(publicDoc.paths['/availability/v1/feed'].get.security, [{ peerMember: [], peerSecret: [] }]);
  } finally {
    await n.host.stop();
  }
});

test('GET /metrics counts transfers by outcome and shows plans in flight, consensus position and store errors', async (t) => {
  const n = await startNode({ transfers: { budgetMs: 200 } });
  try {
    await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'proj', target: 'east' } });
    n.probe.answer('west', 0);
    t.is((await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'm1', body: transfer })).status, 200);
    n.probe.unreachable('east');
    t.is((await n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'm2', body: { ...transfer, source: 'west', target: 'east' } })).status, 504);
    n.audit.failWith(new StoreUnavailableError('audit', 'disk gone'));
    t.is((await n.call('DELETE', '/availability/v1/transfers/other', { token: ADMIN })).status, 503);
    n.audit.failWith(undefined);
    await n.call('POST', '/availability/v1/commands', { token: ADMIN, body: { type: 'transfer_authority', authority: 'lib', target: 'east' } });
    n.probe.hang('west');
    const waiting = n.call('POST', '/availability/v1/transfers', { token: ADMIN, key: 'm3', body: { ...transfer, authority: 'lib' } });
    await n.probe.whenProbed(2);
    const response = await fetch(`${n.control}/metrics`);
    t.is(response.status, 200);
    t.regex(response.headers.get('content-type') ?? '', /text\/plain/);
    const text = await response.text();
    t.regex(text, /baton_transfers_total\{[^}]*outcome="committed"[^}]*\} 1/);
    t.regex(text, /baton_transfers_total\{[^}]*outcome="timed_out"[^}]*\} 1/);
    t.regex(text, /baton_transfer_duration_seconds_count\{[^}]*outcome="committed"[^}]*\} 1/);
    t.regex(text, /baton_transfers_in_flight\{[^}]*\} 1/);
    t.regex(text, /baton_store_errors_total\{[^}]*store="audit"[^}]*\} [1-9]/);
    t.regex(text, /baton_consensus_term\{[^}]*\} [1-9]/);
    t.regex(text, /baton_consensus_applied_index\{[^}]*\} [1-9]/);
    t.regex(text, /baton_consensus_is_leader\{[^}]*\} 1/);
    await n.call('DELETE', '/availability/v1/transfers/lib', { token: ADMIN });
    await waiting;
  } finally {
    await n.host.stop();
  }
});
