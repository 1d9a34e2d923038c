import test from 'ava';
import { startAuthorityNode } from '@baton/host-authority-node/internal/host.js';
import { startStreamNode } from '@baton/host-stream-node/internal/host.js';
import { eventually } from '../hosts/eventually.js';
import { call } from '../support/https-call.js';

/** Keys every plain object inherits: ordinary ids, never members of a lookup table. */
const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];
const STREAM_NAMES = PROTOTYPE_NAMES.filter((name) => /^[A-Za-z0-9]/.test(name));
const TOKEN = 'prototype-names-admin-token';

test('authority ids named after Object.prototype members are ordinary authorities end to end over HTTP', async (t) => {
  const { host, node } = await startAuthorityNode({
    node: {
      self: 'east-1',
      roster: { east: { members: { 'east-1': { public: 'http://127.0.0.1:7600' } } } },
      public: { port: 0 },
      control: { port: 0 },
      tokens: [{ token: TOKEN, principal: 'ops', scopes: ['admin:read', 'admin:write', 'authority:write'] }],
    },
    dataDir: null,
    identity: { use: 'identity-opaque' },
    log: { level: 'silent' },
  });
  t.teardown(() => host.stop());
  const admin = { authorization: `Bearer ${TOKEN}` };
  const control = node.controlAddress.url;
  await eventually(async () => (await call(`${control}/readyz`)).status === 200, 'the member to be ready', 30_000);
  for (const name of PROTOTYPE_NAMES) {
    const missing = await call(`${control}/availability/v1/authorities/${name}`, { headers: admin });
    t.is(missing.status, 404, `${name} has no home before it is established`);
    t.is(missing.type, 'application/problem+json');
    const missingAudit = await call(`${control}/availability/v1/authorities/${name}/audit`, { headers: admin });
    t.true(missingAudit.status === 404 || (missingAudit.status === 200 && JSON.stringify(missingAudit.body).includes('[]')), `${name} audit: ${missingAudit.status} ${JSON.stringify(missingAudit.body)}`);
    const status = await call(`${control}/availability/v1/transfers/${name}`, { headers: admin });
    t.is(status.status, 404, `no transfer of ${name}: ${JSON.stringify(status.body)}`);
    const established = await call(`${control}/availability/v1/commands`, {
      method: 'POST',
      headers: { ...admin, 'idempotency-key': `establish-${name}` },
      body: { type: 'transfer_authority', authority: name, target: 'east' },
    });
    t.is(established.status, 200, `${name} established: ${JSON.stringify(established.body)}`);
    t.like(established.body, { authority: name, home: 'east', epoch: 1 });
    const found = await call(`${control}/availability/v1/authorities/${name}`, { headers: admin });
    t.is(found.status, 200);
    t.deepEqual(found.body, { authority: name, home: 'east', epoch: 1, catch_up: null });
    const write = await call(`${node.publicAddress.url}/availability/v1/authorities/${name}/writes`, { method: 'POST', headers: admin, body: { epoch: 1, operation: `op-${name}` } });
    t.is(write.status, 200, `${name} write: ${JSON.stringify(write.body)}`);
    t.like(write.body, { authority: name, epoch: 1 });
  }
  // Nothing leaked between them, nor onto the ones never established.
  const other = await call(`${control}/availability/v1/authorities/isPrototypeOf`, { headers: admin });
  t.is(other.status, 404);
});

test('stream and node ids named after Object.prototype members are ordinary ids end to end over HTTP', async (t) => {
  const { host, node } = await startStreamNode({
    node: { self: 'n1', http: { port: 0 }, wal: { kind: 'memory' }, tokens: [{ token: TOKEN, principal: 'ops', scopes: ['admin', 'stream:append', 'stream:read'] }] },
    dataDir: null,
    objectStore: { use: 'memory-object-store' },
    log: { level: 'silent' },
  });
  t.teardown(() => host.stop());
  const admin = { authorization: `Bearer ${TOKEN}` };
  const url = node.url;
  await eventually(async () => (await call(`${url}/v1/admin/nodes/n1`, { headers: admin })).status === 200, 'n1 registered', 30_000);
  // Stream and node ids start with a letter or digit, so __proto__ is refused as _x is: by the
  // id rule (400 naming it), never by a lookup that finds something.
  for (const invalid of ['__proto__', '_x']) {
    const refused = await call(`${url}/v1/admin/streams`, { method: 'POST', headers: admin, body: { stream: invalid } });
    t.is(refused.status, 400, `${invalid}: ${JSON.stringify(refused.body)}`);
    t.regex(JSON.stringify(refused.body), /starting with a letter or digit/);
  }
  for (const name of STREAM_NAMES) {
    const missing = await call(`${url}/v1/streams/${name}`, { headers: admin });
    t.is(missing.status, 404, `stream ${name} does not exist yet: ${JSON.stringify(missing.body)}`);
    const missingNode = await call(`${url}/v1/admin/nodes/${name}`, { headers: admin });
    t.is(missingNode.status, 404, `node ${name} does not exist yet: ${JSON.stringify(missingNode.body)}`);
    const missingTransfer = await call(`${url}/v1/admin/transfers/${name}`, { headers: admin });
    t.is(missingTransfer.status, 404, `no transfer of ${name}: ${JSON.stringify(missingTransfer.body)}`);

    const created = await call(`${url}/v1/admin/streams`, { method: 'POST', headers: admin, body: { stream: name } });
    t.is(created.status, 201, `stream ${name} created: ${JSON.stringify(created.body)}`);
    await eventually(async () => {
      const appended = await call(`${url}/v1/streams/${name}/records`, { method: 'POST', headers: admin, body: { records: [{ body: `hello ${name}` }] } });
      return appended.status === 200 || appended.status === 201;
    }, `an append to ${name}`, 30_000);
    const read = await call(`${url}/v1/streams/${name}/records`, { headers: admin });
    t.is(read.status, 200);
    t.deepEqual((read.body as { records: { body: string }[] }).records.map((r) => r.body), [`hello ${name}`]);
    const described = await call(`${url}/v1/streams/${name}`, { headers: admin });
    t.is(described.status, 200);
    t.like(described.body, { stream: name, owner: 'n1' });

    const registered = await call(`${url}/v1/admin/nodes`, { method: 'POST', headers: admin, body: { id: name, address: 'http://127.0.0.1:9', slots: 1 } });
    t.is(registered.status, 201, `node ${name} registered: ${JSON.stringify(registered.body)}`);
    const found = await call(`${url}/v1/admin/nodes/${name}`, { headers: admin });
    t.is(found.status, 200);
    t.like(found.body, { id: name, slots: 1 });
  }
  const listed = await call(`${url}/v1/admin/streams?limit=100`, { headers: admin });
  t.deepEqual(((listed.body as { streams: { stream: string }[] }).streams.map((s) => s.stream)).sort(), [...STREAM_NAMES].sort());
});
