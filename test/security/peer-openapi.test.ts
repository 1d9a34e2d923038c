import test from 'ava';
import { startAuthorityNode } from '@baton/host-authority-node/internal/host.js';
import { startStreamNode } from '@baton/host-stream-node/internal/host.js';

type Operation = { tags?: string[]; security?: Record<string, string[]>[]; responses: Record<string, unknown> };
type Document = { paths: Record<string, Record<string, Operation>>; components: { securitySchemes: Record<string, { name?: string }> } };

const RAFT_ROUTES = ['/internal/raft/v1/stream', '/internal/raft/v1/messages', '/internal/raft/v1/requests'];
const PEER_SECURITY = [{ peerMember: [], peerSecret: [] }];

/** Every peer operation is tagged internal, requires the member credential and documents its refusals. */
function assertPeerOperation(t: import('ava').ExecutionContext, document: Document, method: string, path: string): void {
  const operation = document.paths[path]?.[method];
  if (!operation) {
    t.fail(`${method.toUpperCase()} ${path} is missing from /openapi.json`);
    return;
  }
  t.true(operation.tags?.includes('internal'), `${path} tagged internal`);
  t.deepEqual(operation.security, PEER_SECURITY, `${path} requires the peer credential`);
  for (const status of ['401', '403']) t.truthy(operation.responses[status], `${path} documents ${status}`);
  t.is(document.components.securitySchemes.peerMember.name, 'X-Baton-Member');
  t.is(document.components.securitySchemes.peerSecret.name, 'X-Baton-Peer-Secret');
}

test('a stream node documents its Raft peer routes in /openapi.json, tagged internal, with the peer credential', async (t) => {
  const { host, node } = await startStreamNode({
    node: { self: 'n1', http: { port: 0 }, wal: { kind: 'memory' } },
    dataDir: null,
    objectStore: { use: 'memory-object-store' },
    log: { level: 'silent' },
  });
  t.teardown(() => host.stop());
  const document = (await (await fetch(`${node.url}/openapi.json`)).json()) as Document;
  for (const path of RAFT_ROUTES) assertPeerOperation(t, document, 'post', path);
  t.truthy(document.paths['/internal/raft/v1/requests'].post.responses['413'], 'the size bound is documented');
});

test('an authority node documents its Raft routes, feed and applied-serial routes on the public server, tagged internal, with the peer credential', async (t) => {
  const { host, node } = await startAuthorityNode({
    node: {
      self: 'east-1',
      roster: { east: { members: { 'east-1': { public: 'http://127.0.0.1:7600' } } } },
      public: { port: 0 },
      control: { port: 0 },
    },
    dataDir: null,
    identity: { use: 'identity-opaque' },
    log: { level: 'silent' },
  });
  t.teardown(() => host.stop());
  const document = (await (await fetch(`${node.publicAddress.url}/openapi.json`)).json()) as Document;
  for (const path of RAFT_ROUTES) assertPeerOperation(t, document, 'post', path);
  assertPeerOperation(t, document, 'get', '/availability/v1/feed');
  assertPeerOperation(t, document, 'get', '/availability/v1/feeds/{origin}/applied');
});
