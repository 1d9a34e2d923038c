import test from 'ava';
import { AUTHORITY_NODE } from '@baton/authority-transfer/internal/plugins.js';
import type { AuditRecord } from '@baton/contracts/internal/audit-store.js';
import { RedisServer } from '@baton/conformance/internal/servers/redis-server.js';
import { eventually, openStore } from '../../plugins/redis/redis-fixture.js';
import { ADMIN, WRITER, transfer, waitFor } from './node-harness.js';
import { waitForLeader } from './loopback-members.js';
import { call } from './http-call.js';
import { startRedisAuthorityCluster, type RedisAuthorityMember } from './redis-cluster.js';

/** The fields of the audit record, exactly as seed 003 lists them. */
const SEED_FIELDS = [
  'actor',
  'authority',
  'barrier',
  'commit_index',
  'commit_term',
  'epoch',
  'id',
  'reason',
  'source',
  'target',
];

/**
 * What every record of an authority's trail adds to the seed's fields: what moved it, its
 * subject, the epoch before, the driver's time, and its links in the trail's hash chain.
 */
const TRAIL_FIELDS = ['epoch_before', 'hash', 'kind', 'prev_hash', 'subject', 'subject_type', 'time'];

/** What a member's audit store holds in Redis, read through a store of its own. */
async function storedInRedis(redis: RedisServer, member: RedisAuthorityMember, id: string) {
  const { store, cleanup } = await openStore(redis, { keyPrefix: member.keyPrefix });
  try {
    return await store.byId(id);
  } finally {
    await cleanup();
  }
}

test('authority nodes on Raft with the Redis audit store: a planned transfer audited in Redis, a Redis outage answered 503 with the audit left pending, and the projection completing once Redis returns', async (t) => {
  const redis = await RedisServer.start();
  t.teardown(() => redis.close());
  const cluster = await startRedisAuthorityCluster(redis, ['east', 'west', 'north']);
  t.teardown(() => cluster.stop());
  const [east, west, north] = cluster.members;
  const members = cluster.members;
  await waitForLeader(members.map((m) => m.consensus));
  const established = await call(east.control, 'POST', '/availability/v1/commands', {
    token: ADMIN,
    body: {
      type: 'transfer_authority',
      authority: 'proj',
      target: 'east',
    },
  });
  t.is(established.status, 200, JSON.stringify(established.body));
  const write = await call(east.public, 'POST', '/availability/v1/authorities/proj/writes', {
    token: WRITER,
    body: {
      operation: 'op1',
      epoch: 1,
    },
  });
  t.is(write.status, 200, JSON.stringify(write.body));

  // 1. A planned transfer east -> west commits, and every voter's audit is in Redis.
  const first = await call(east.control, 'POST', '/availability/v1/transfers', {
    token: ADMIN,
    body: transfer,
    key: 'e2e-first',
  });
  t.is(first.status, 200, JSON.stringify(first.body));
  t.like(first.body, {
    id: 'e2e-first',
    source: 'east',
    target: 'west',
    actor: 'olivia',
    epoch: 2,
  });
  await waitFor(
    () => members.every((m) => m.consensus.view().state.pending.size === 0),
    'every voter to acknowledge the first audit',
    15_000,
  );
  for (const member of members) {
    t.deepEqual(
      await storedInRedis(redis, member, 'e2e-first'),
      first.body as unknown as AuditRecord,
      member.id,
    );
  }

  // 2. The next transfer (west -> north) is admitted and waits for north to catch up: the
  //    path to north is cut, so the probe reads no frontier. Redis stops meanwhile.
  const onWest = await call(west.public, 'POST', '/availability/v1/authorities/proj/writes', {
    token: WRITER,
    body: {
      operation: 'op2',
      epoch: 2,
    },
  });
  t.is(onWest.status, 200, JSON.stringify(onWest.body));
  cluster.cut.isolate();
  const second = call(west.control, 'POST', '/availability/v1/transfers', {
    token: ADMIN,
    body: { authority: 'proj', source: 'west', target: 'north', reason: 'rebalance toward north' },
    key: 'e2e-second',
  });
  const engine = west.host.get(AUTHORITY_NODE).engine!;
  await waitFor(
    () => engine.registry.get('proj')?.lastReadingAt !== undefined,
    'the second transfer to be admitted and probing north',
  );
  await redis.stop();
  cluster.cut.heal();

  // 3. North catches up, the move commits, and west's audit write fails: 503 naming the transfer.
  const refused = await second;
  t.is(refused.status, 503, JSON.stringify(refused.body));
  t.is(refused.body.transfer_id, 'e2e-second');
  t.regex(String(refused.body.detail), /e2e-second/);
  // A follower applies the commit a moment after the leader decided it.
  await waitFor(
    () => members.every((m) => m.consensus.view().state.pending.get('e2e-second') !== undefined),
    'every voter to apply the commit',
  );
  for (const member of members) {
    const pending = member.consensus.view().state.pending.get('e2e-second');
    t.truthy(pending, `${member.id} holds the sealed record as pending`);
    t.deepEqual([...(pending?.awaiting ?? [])].sort(), members.map((m) => m.id).sort(), member.id);
  }
  const home = await call(north.control, 'GET', '/availability/v1/authorities/proj', {
    token: ADMIN,
  });
  t.like(
    home.body,
    { home: 'north', epoch: 3 },
    'the move stands although its audit is not stored',
  );

  // 4. Redis returns; the nodes, never restarted, finish the projection on their own.
  await redis.restart();
  await waitFor(
    () => members.every((m) => m.consensus.view().state.pending.get('e2e-second') === undefined),
    'every voter to store and acknowledge the pending audit',
    30_000,
  );
  const sealed = await eventually(async () => {
    const record = await storedInRedis(redis, west, 'e2e-second');
    if (!record) throw new Error('e2e-second is not in west’s audit yet');
    return record;
  });
  t.like(sealed, {
    id: 'e2e-second',
    authority: 'proj',
    source: 'west',
    target: 'north',
    actor: 'olivia',
    reason: 'rebalance toward north',
    epoch: 3,
  });
  t.true(sealed.barrier >= 1, 'the barrier covers the write west acknowledged');
  t.true(sealed.commit_index > (first.body.commit_index as number));
  for (const member of members) {
    for (const [id, expected] of [
      ['e2e-first', first.body],
      ['e2e-second', sealed],
    ] as const) {
      const stored = await storedInRedis(redis, member, id);
      t.deepEqual(stored, expected as unknown as AuditRecord, `${member.id}: ${id}`);
      t.deepEqual(
        Object.keys(stored ?? {}).sort(),
        [...SEED_FIELDS, ...TRAIL_FIELDS].sort(),
        `${member.id}: ${id} has exactly the seed's fields and the trail's`,
      );
    }
    const audit = await call(member.control, 'GET', '/availability/v1/authorities/proj/audit', {
      token: ADMIN,
    });
    t.deepEqual(
      (audit.body.records as AuditRecord[]).map((r) => r.id),
      ['e2e-second', 'e2e-first', `${established.body.commit_index}-0`],
      `${member.id}: its audit, newest first, down to the establish`,
    );
    t.like(
      (await call(member.control, 'GET', '/availability/v1/authorities/proj', { token: ADMIN }))
        .body,
      {
        home: 'north',
        epoch: 3,
      },
    );
  }

  // A retry under the same key answers the committed decision: no second move.
  const retried = await call(west.control, 'POST', '/availability/v1/transfers', {
    token: ADMIN,
    body: { authority: 'proj', source: 'west', target: 'north', reason: 'rebalance toward north' },
    key: 'e2e-second',
  });
  t.is(retried.status, 200, JSON.stringify(retried.body));
  t.deepEqual(retried.body, sealed as unknown as Record<string, unknown>);
});
