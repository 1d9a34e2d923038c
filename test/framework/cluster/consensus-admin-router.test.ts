import test from 'ava';
import { consensusAdminRouter } from '@baton/cluster/internal/consensus-admin-router.js';
import { BearerTokens } from '@baton/http/internal/auth.js';
import { ApiDocument } from '@baton/http/internal/openapi.js';
import { makeMember } from '../../plugins/etcd/etcd-fixture.js';
import { call, startApi } from '../http/harness.js';

const TOKEN = 'consensus-admin-token';

test('on the etcd consensus a leader move and a snapshot answer 501 saying why and what to do instead', async (t) => {
  // Never started: the routes refuse on the capability alone, before asking etcd anything.
  const etcd = makeMember(['http://127.0.0.1:9'], '/unused/', 'n1');
  const document = new ApiDocument({ title: 'test', version: '1' });
  const router = consensusAdminRouter(etcd, document, {
    prefix: '/v1/admin',
    readScope: 'admin',
    writeScope: 'admin',
    tags: ['admin'],
    variant: 'stream-transfer',
    self: 'n1',
    consensusName: etcd.constructor.name,
  });
  const api = await startApi(router, { tokens: new BearerTokens([{ token: TOKEN, principal: 'operator', scopes: ['admin'] }]) });
  t.teardown(() => api.stop());
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

  const move = await call(`${api.url}/v1/admin/consensus/leader`, { method: 'POST', headers, body: JSON.stringify({ member: 'n2' }) });
  t.is(move.status, 501);
  t.is(move.headers.get('content-type'), 'application/problem+json');
  t.regex(move.body.detail, /moving the leader is not possible with this cluster's metadata consensus \(EtcdConsensus\): its leader holds an etcd lease/);
  t.like(move.body, { capability: 'moveLeader', consensus: 'EtcdConsensus' });

  const snapshot = await call(`${api.url}/v1/admin/consensus/snapshot`, { headers });
  t.is(snapshot.status, 501);
  t.regex(snapshot.body.detail, /etcdctl snapshot save/);

  // Every route is in the document, with the 501 it can answer.
  const paths = document.toJSON().paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
  t.truthy(paths['/v1/admin/consensus/leader'].post.responses['501']);
  t.truthy(paths['/v1/admin/consensus/snapshot'].get.responses['501']);
  t.deepEqual(Object.keys(paths).sort(), ['/v1/admin/consensus/leader', '/v1/admin/consensus/members', '/v1/admin/consensus/members/{member}', '/v1/admin/consensus/snapshot']);
});
