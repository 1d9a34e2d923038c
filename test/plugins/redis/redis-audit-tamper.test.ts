import test from 'ava';
import { Redis } from 'ioredis';
import { verifyTrail } from '@baton/consensus/internal/audit-chain.js';
import { RedisServer } from '@baton/conformance/internal/servers/redis-server.js';
import type { AuditRecord } from '@baton/contracts/internal/audit-store.js';
import { AppliedLog } from '../../framework/stream-transfer/metadata-fixture.js';
import { openStore } from './redis-fixture.js';

/** A short stream trail as the state machine seals it: create, transfer, completion, drain. */
function sealedTrail(): { records: AuditRecord[]; log: AppliedLog } {
  const log = new AppliedLog().nodes(['a', 5], ['b', 5]);
  log.must({ type: 'create-stream', stream: 'orders', node: 'a', actor: 'olivia' });
  log.must({ type: 'create-stream', stream: 'invoices', node: 'a', actor: 'olivia' });
  log.must({ type: 'transfer', stream: 'orders', target: 'b', actor: 'olivia' });
  log.settle('orders');
  log.must({ type: 'drain', node: 'a', actor: 'olivia' });
  const records = [...log.state.auditPendingRecords()].map((p) => p.record);
  return { records, log };
}

test('a record edited in Redis is named by the chain verify; the untouched trail verifies', async (t) => {
  const server = await RedisServer.start();
  t.teardown(() => server.close());
  const { store, cleanup } = await openStore(server);
  t.teardown(cleanup);
  const { records, log } = sealedTrail();
  for (const record of records) await store.put(record);
  const stored = async () => (await store.list('streams', { limit: 1000 })).reverse();
  t.like(verifyTrail(await stored(), log.state.auditChain), { ok: true, checked: records.length, behind: false });

  // Someone with access to Redis rewrites who moved orders, in both places the store keeps it.
  const victim = records.find((r) => r.kind === 'transfer_proposed')!;
  const raw = new Redis(server.url);
  t.teardown(() => raw.quit().then(() => undefined));
  const prefix = (store as unknown as { options: { keyPrefix: string } }).options.keyPrefix;
  const key = `${prefix}audit:authority:streams`;
  const [original] = (await raw.zrangebyscore(key, victim.commit_index, victim.commit_index)).filter((m) => JSON.parse(m).id === victim.id);
  const forged = JSON.stringify({ ...JSON.parse(original), actor: 'mallory' });
  await raw.multi().zrem(key, original).zadd(key, victim.commit_index, forged).hset(`${prefix}audit:by-id`, victim.id, forged).exec();
  t.is((await store.byId(victim.id))?.actor, 'mallory', 'the store hands out the forged record');

  const verdict = verifyTrail(await stored(), log.state.auditChain);
  t.false(verdict.ok);
  t.like(verdict, { id: victim.id, commit_index: victim.commit_index });
  t.regex((verdict as { why: string }).why, /hashes to/);
});
