import test from 'ava';
import { join } from 'node:path';
import { AuditConflictError, differingAuditFields, type AuditRecord } from '@baton/contracts/internal/audit-store.js';
import { checkCrashConsistency, type CrashWorkload } from '@baton/testing/internal/crash/crash-checker.js';
import { crashCheckSettings, describeReport } from '@baton/testing/internal/crash/crash-report.js';
import { FsAuditStore } from '@baton/plugin-fs/internal/fs-audit-store.js';

const REPLAY = 'npx ava dist/test/plugins/fs/fs-audit-store-crash-consistency.test.js';
const AUTHORITIES = ['npm:left-pad', 'pypi:requests', 'oci:library/nginx'];

/** A put of a new record, a put of one already stored (idempotent), or one refused as a conflict. */
type Op = { kind: 'put' | 'again' | 'conflict'; record: AuditRecord };

/**
 * Records projected for three authorities, two puts at a time (the store runs them one after
 * another), some put again as a projection retry does, some conflicting with a stored one
 * (a reused transfer id), with one restart midway.
 */
function auditWorkload(): CrashWorkload<Op> {
  return {
    async run({ dir, files, rng, history }) {
      const stored: AuditRecord[] = [];
      const next = new Map(AUTHORITIES.map((a) => [a, 1]));
      let store = new FsAuditStore({ dir: join(dir, 'store'), files });
      await store.start();
      const newRecord = (n: number): AuditRecord => {
        const authority = rng.pick(AUTHORITIES);
        const commit_index = next.get(authority)!;
        next.set(authority, commit_index + 1 + rng.int(3));
        return {
          id: `transfer-${n}-${rng.hex(3)}`, authority, source: rng.pick(['east', 'west']), target: rng.pick(['north', 'south']),
          actor: 'operator:alice', reason: `move ${n}`, barrier: commit_index * 2, epoch: n, commit_term: 1 + rng.int(3), commit_index,
        };
      };
      for (let step = 0; step < 26; step++) {
        if (step === 13) {
          store = new FsAuditStore({ dir: join(dir, 'store'), files });
          await store.start();
        }
        const puts: Promise<unknown>[] = [];
        for (let k = 0; k < 1 + rng.int(2); k++) {
          const roll = rng.next();
          if (stored.length > 0 && roll < 0.15) {
            const again = rng.pick(stored);
            puts.push(history.run({ kind: 'again', record: again }, () => store.put(again)));
          } else if (stored.length > 0 && roll < 0.22) {
            const taken = rng.pick(stored);
            const conflict = { ...newRecord(1_000 + step), id: taken.id };
            history.start({ kind: 'conflict', record: conflict });
            puts.push(store.put(conflict).then(
              () => Promise.reject(new Error(`a put reusing ${taken.id} was accepted`)),
              (e: unknown) => (e instanceof AuditConflictError ? undefined : Promise.reject(e)),
            ));
          } else {
            const record = newRecord(step * 2 + k);
            puts.push(history.run({ kind: 'put', record }, () => store.put(record)).then(() => stored.push(record)));
          }
        }
        await Promise.all(puts);
      }
    },

    async verify({ dir, files, history }) {
      const store = new FsAuditStore({ dir: join(dir, 'store'), files });
      await store.start();
      const written = history.filter((h) => h.op.kind !== 'conflict');
      const byIdentity = new Map(written.map((h) => [`${h.op.record.authority}@${h.op.record.commit_index}`, h.op.record]));
      const acknowledged = new Set(written.filter((h) => h.outcome === 'acknowledged').map((h) => h.op.record.id));
      for (const authority of AUTHORITIES) {
        const listed = await store.list(authority, { limit: 1_000 });
        for (const record of listed) {
          const put = byIdentity.get(`${authority}@${record.commit_index}`);
          if (!put) throw new Error(`${authority} @ ${record.commit_index}: a record no put wrote (${record.id})`);
          const differences = differingAuditFields(put, record);
          if (differences.length > 0) throw new Error(`${authority} @ ${record.commit_index}: differs from what was put in ${differences.join(', ')}`);
        }
        const ids = new Set(listed.map((r) => r.id));
        for (const h of written) {
          if (h.op.record.authority === authority && acknowledged.has(h.op.record.id) && !ids.has(h.op.record.id)) {
            throw new Error(`${authority} @ ${h.op.record.commit_index}: the acknowledged record ${h.op.record.id} is missing from the list`);
          }
        }
        const latest = await store.latest(authority);
        if (latest?.commit_index !== listed[0]?.commit_index) throw new Error(`${authority}: latest is ${latest?.commit_index}, the list starts at ${listed[0]?.commit_index}`);
      }
      for (const id of acknowledged) {
        const found = await store.byId(id);
        if (found?.id !== id) throw new Error(`transfer ${id}: its acknowledged record is not found by id`);
      }
      // A projection retries what it is not sure of: each put in flight must go through now.
      for (const h of written) {
        if (h.outcome === 'in-flight') {
          await store.put(h.op.record);
          if ((await store.byId(h.op.record.id))?.commit_index !== h.op.record.commit_index) throw new Error(`transfer ${h.op.record.id}: retried, still not found by id`);
        }
      }
    },
  };
}

test('fs audit store: no acknowledged record is lost or changed by a power cut, and a retried put always goes through', async (t) => {
  const settings = crashCheckSettings({ states: 1_000, seed: 24 });
  const report = await checkCrashConsistency(auditWorkload(), { store: 'fs audit store', ...settings });
  const lines = describeReport(report, REPLAY);
  for (const line of lines) t.log(line);
  t.deepEqual(report.failures, [], lines.join('\n'));
  if (settings.point === undefined) t.true(report.explored >= settings.states, `only ${report.explored} distinct crash states`);
});
