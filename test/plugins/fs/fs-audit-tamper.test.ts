import test from 'ava';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verifyTrail } from '@baton/consensus/internal/audit-chain.js';
import { recordFileName } from '@baton/plugin-fs/internal/audit-record-file.js';
import { FsAuditStore } from '@baton/plugin-fs/internal/fs-audit-store.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { AppliedLog } from '../../framework/stream-transfer/metadata-fixture.js';

test('a record file edited, or removed, in the fs store is named by the chain verify', async (t) => {
  const dir = await makeTempDir('fs-audit-tamper');
  t.teardown(() => dir.remove());
  const store = new FsAuditStore({ dir: dir.path });
  await store.start();
  const log = new AppliedLog().nodes(['a', 5], ['b', 5]);
  log.must({ type: 'create-stream', stream: 'orders', node: 'a', actor: 'olivia' });
  log.must({ type: 'rebalance', actor: 'olivia' });
  log.must({ type: 'transfer', stream: 'orders', target: 'b', actor: 'olivia' });
  log.settle('orders');
  const records = [...log.state.auditPendingRecords()].map((p) => p.record);
  for (const record of records) await store.put(record);
  const stored = async () => (await store.list('streams', { limit: 1000 })).reverse();
  t.like(verifyTrail(await stored(), log.state.auditChain), { ok: true, checked: records.length });

  const file = (r: { commit_index: number; seq?: number }) => join(dir.path, 'audit', 'records', 'streams.a', recordFileName(r.commit_index, r.seq ?? 0));
  const edited = records.find((r) => r.kind === 'transfer_proposed')!;
  const text = JSON.parse(await readFile(file(edited), 'utf8'));
  text.record.target = 'elsewhere';
  await writeFile(file(edited), JSON.stringify(text));
  t.like(verifyTrail(await stored(), log.state.auditChain), { ok: false, id: edited.id });

  // Put back, then remove a record from the middle: the one after it no longer links.
  text.record.target = edited.target;
  await writeFile(file(edited), JSON.stringify(text));
  const ordered = await stored();
  await rm(file(ordered[1]));
  t.like(verifyTrail(await stored(), log.state.auditChain), { ok: false, id: ordered[2].id });
});
