import test from 'ava';
import { join } from 'node:path';
import { PreconditionFailedError } from '@baton/contracts/internal/object-store.js';
import { checkCrashConsistency, type CrashWorkload } from '@baton/testing/internal/crash/crash-checker.js';
import { crashCheckSettings, describeReport } from '@baton/testing/internal/crash/crash-report.js';
import { FsObjectStore } from '@baton/plugin-fs/internal/fs-object-store.js';

const REPLAY = 'npx ava dist/test/plugins/fs/fs-object-store-crash-consistency.test.js';
/** Keys that share directories, so puts create them and deletes prune them under each other. */
const KEYS = ['a', 'a/b', 'a/b/c', 'x/y', 'x/z', 'seg/s1/0001', 'seg/s1/0002', 'seg/s2/0001', 'deep/1/2/3/4'];

/** One call of the workload; `refused` is a create-if-absent of a key that existed, which must change nothing. */
type Op =
  | { kind: 'put' | 'create'; key: string; value: string }
  | { kind: 'refused'; key: string; value: string }
  | { kind: 'delete'; key: string };

const utf8 = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined) => (b === undefined ? undefined : new TextDecoder().decode(b));

/**
 * Puts (overwrites), creates-if-absent and deletes over nested keys, up to three at once on
 * different keys, with one restart (a new store instance on the directory) midway.
 */
function objectStoreWorkload(): CrashWorkload<Op> {
  return {
    async run({ dir, files, rng, history }) {
      const stored = new Map<string, string>();
      let store = new FsObjectStore({ dir: join(dir, 'store'), files });
      await store.start();
      for (let step = 0; step < 70; step++) {
        if (step === 35) {
          store = new FsObjectStore({ dir: join(dir, 'store'), files });
          await store.start();
        }
        const keys = [...KEYS].sort(() => rng.next() - 0.5).slice(0, 1 + rng.int(3));
        await Promise.all(
          keys.map(async (key) => {
            const value = `${key}@${step}:${rng.hex(1 + rng.int(24))}`;
            const present = stored.has(key);
            const roll = rng.next();
            if (present && roll < 0.3) {
              await history.run({ kind: 'delete', key }, () => store.delete(key));
              stored.delete(key);
            } else if (present && roll < 0.4) {
              const refused = await store.put(key, utf8(value), { ifAbsent: true }).catch((e: unknown) => e);
              if (!(refused instanceof PreconditionFailedError)) throw new Error(`a create of existing ${key} was not refused: ${String(refused)}`);
              history.start({ kind: 'refused', key, value });
            } else {
              const kind = present || roll < 0.5 ? 'put' : 'create';
              await history.run({ kind, key, value }, () => store.put(key, utf8(value), kind === 'create' ? { ifAbsent: true } : undefined));
              stored.set(key, value);
            }
          }),
        );
      }
    },

    async verify({ dir, files, history }) {
      const store = new FsObjectStore({ dir: join(dir, 'store'), files });
      await store.start();
      const present = new Set<string>();
      for (const key of KEYS) {
        let allowed: (string | undefined)[] = [undefined];
        const refused: string[] = [];
        for (const { op, outcome } of history.filter((h) => h.op.key === key)) {
          if (op.kind === 'refused') {
            refused.push(op.value);
            continue;
          }
          const result = op.kind === 'delete' ? undefined : op.value;
          // Calls on one key run one after another: at most the last one is in flight.
          allowed = outcome === 'acknowledged' ? [result] : [...allowed, result];
        }
        const found = text(await store.get(key));
        if (found !== undefined && refused.includes(found)) throw new Error(`${key}: holds ${found}, written by a create-if-absent that was refused`);
        if (!allowed.includes(found)) {
          throw new Error(`${key}: holds ${JSON.stringify(found)}, but an acknowledged write left ${allowed.map((v) => JSON.stringify(v)).join(' or ')}`);
        }
        const head = await store.head(key);
        if (head?.size !== (found === undefined ? undefined : utf8(found).length)) throw new Error(`${key}: head says ${JSON.stringify(head)}, get found ${found}`);
        if (found !== undefined) present.add(key);
      }
      const listed = (await store.list('', { limit: 1_000 })).objects.map((o) => o.key);
      if (JSON.stringify(listed) !== JSON.stringify([...present].sort())) throw new Error(`the listing shows ${listed.join(', ')}; the objects are ${[...present].sort().join(', ')}`);
      // Recovered means writable again, in the directories the crash left.
      await store.put('a/b/after-crash', utf8('ok'));
      if (text(await store.get('a/b/after-crash')) !== 'ok') throw new Error('a put after recovery did not read back');
    },
  };
}

test('fs object store: no acknowledged put or delete is lost or changed by a power cut, and nothing else appears', async (t) => {
  const settings = crashCheckSettings({ states: 1_000, seed: 24 });
  const report = await checkCrashConsistency(objectStoreWorkload(), { store: 'fs object store', ...settings });
  const lines = describeReport(report, REPLAY);
  for (const line of lines) t.log(line);
  t.deepEqual(report.failures, [], lines.join('\n'));
  if (settings.point === undefined) t.true(report.explored >= settings.states, `only ${report.explored} distinct crash states`);
});
