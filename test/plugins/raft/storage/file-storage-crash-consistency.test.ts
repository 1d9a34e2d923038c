import test from 'ava';
import { isDeepStrictEqual } from 'node:util';
import { join } from 'node:path';
import { DirectoryFiles } from '@baton/kernel/internal/byte-files.js';
import type { DurableFiles } from '@baton/kernel/internal/durable-files.js';
import { checkCrashConsistency, type CrashWorkload } from '@baton/testing/internal/crash/crash-checker.js';
import { crashCheckSettings, describeReport } from '@baton/testing/internal/crash/crash-report.js';
import type { Entry, HardState, Snapshot } from '@baton/plugin-raft/internal/core/types.js';
import { FileRaftStorage } from '@baton/plugin-raft/internal/storage/file-storage.js';
import type { RecoveredState } from '@baton/plugin-raft/internal/storage/raft-storage.js';
import { imageOfPieces, piecesOf } from '@baton/plugin-raft/internal/storage/snapshot-image.js';

const REPLAY = 'npx ava dist/test/plugins/raft/storage/file-storage-crash-consistency.test.js';

/**
 * What a member asked of its storage. A persist's records reach the log in order (snapshot in
 * force, entries, hard state), so a crash during one keeps a prefix of them; a compaction is
 * whole or not at all. Writing a snapshot changes nothing a member recovers.
 */
type Op =
  | { kind: 'persist'; snapshot?: Snapshot; entries: Entry[]; hardState?: HardState }
  | { kind: 'compact'; snapshot: Snapshot; retained: Entry[]; hardState: HardState }
  | { kind: 'write-snapshot'; index: number };

/** What a member recovers, in plain values. */
interface Logical {
  hardState: HardState;
  snapshot?: { meta: Snapshot['meta']; pieces: unknown[] };
  entries: Entry[];
}

const plainSnapshot = (s: Snapshot | undefined) => s && { meta: s.meta, pieces: [...piecesOf(s.data)] };
const plain = (r: RecoveredState): Logical => ({ hardState: r.hardState, snapshot: plainSnapshot(r.snapshot), entries: r.entries });

type LogRecord = { t: 'base'; snapshot: Snapshot } | { t: 'e'; e: Entry } | { t: 'h'; h: HardState };

function recordsOf(op: Extract<Op, { kind: 'persist' }>): LogRecord[] {
  return [
    ...(op.snapshot ? [{ t: 'base' as const, snapshot: op.snapshot }] : []),
    ...op.entries.map((e) => ({ t: 'e' as const, e })),
    ...(op.hardState ? [{ t: 'h' as const, h: op.hardState }] : []),
  ];
}

function applyRecord(state: Logical, r: LogRecord): Logical {
  if (r.t === 'h') return { ...state, hardState: r.h };
  if (r.t === 'base') return { ...state, snapshot: plainSnapshot(r.snapshot), entries: [] };
  const kept = state.entries.filter((e) => e.index < r.e.index);
  return { ...state, entries: [...kept, r.e] };
}

function applyOp(state: Logical, op: Op): Logical {
  if (op.kind === 'write-snapshot') return state;
  if (op.kind === 'compact') return { hardState: op.hardState, snapshot: plainSnapshot(op.snapshot), entries: op.retained };
  return recordsOf(op).reduce(applyRecord, state);
}

/** Every state a member may recover after a crash with `inFlight` under way: none of it, or a prefix of its records. */
function candidates(state: Logical, inFlight: Op | undefined): Logical[] {
  if (!inFlight || inFlight.kind === 'write-snapshot') return [state];
  if (inFlight.kind === 'compact') return [state, applyOp(state, inFlight)];
  const out = [state];
  for (const r of recordsOf(inFlight)) out.push(applyRecord(out[out.length - 1], r));
  return out;
}

const storageOn = (dir: string, files: DurableFiles) => new FileRaftStorage(new DirectoryFiles(join(dir, 'raft'), files), { segmentBytes: 700 });

/**
 * A member's storage traffic: appends of entries with hard states, conflicting suffixes from a
 * new leader, its own snapshots (written while a persist goes on, then put in force by a
 * compaction) and snapshots installed from a leader, over small segments, with a restart midway.
 */
function raftWorkload(): CrashWorkload<Op> {
  return {
    async run({ dir, files, rng, history }) {
      let storage = storageOn(dir, files);
      let state: Logical = plain(await storage.load());
      let term = 1;
      const last = () => state.entries.at(-1)?.index ?? state.snapshot?.meta.index ?? 0;
      const first = () => (state.snapshot?.meta.index ?? 0) + 1;
      const entry = (index: number): Entry => ({ index, term, type: 'normal', data: { put: `k${index % 7}`, value: rng.hex(1 + rng.int(10)) } });
      const snapshotAt = (index: number, snapTerm: number): Snapshot => ({
        meta: { index, term: snapTerm, voters: ['n1', 'n2', 'n3'] },
        data: imageOfPieces(Array.from({ length: 1 + rng.int(4) }, (_, k) => ({ at: index, piece: k, state: rng.hex(4) }))),
      });
      const run = async (op: Op, call: () => Promise<void>) => {
        await history.run(op, call);
        state = applyOp(state, op);
      };
      for (let step = 0; step < 70; step++) {
        if (step === 35) {
          await storage.close();
          storage = storageOn(dir, files);
          state = plain(await storage.load());
        }
        const roll = rng.next();
        const commit = Math.max(state.hardState.commit, last() - rng.int(3));
        if (roll < 0.08 && last() >= first()) {
          // The member's own snapshot of what it applied: written while the log goes on, then put in force.
          const at = Math.max(first(), commit);
          const snapshot = snapshotAt(at, state.entries.find((e) => e.index === at)?.term ?? term);
          const writing = history.run({ kind: 'write-snapshot', index: at }, () => storage.writeSnapshot(snapshot));
          const more = [entry(last() + 1)];
          const hardState = { ...state.hardState, commit: Math.max(commit, state.hardState.commit) };
          await Promise.all([writing, run({ kind: 'persist', entries: more, hardState }, () => storage.persist({ entries: more, hardState }))]);
          const compactTo = Math.max(state.snapshot?.meta.index ?? 0, at - rng.int(2));
          const retained = state.entries.filter((e) => e.index > compactTo);
          await run({ kind: 'compact', snapshot, retained, hardState: state.hardState }, () =>
            storage.compact(snapshot, compactTo, retained, state.hardState),
          );
        } else if (roll < 0.12) {
          // A snapshot from a leader that is ahead: it replaces the whole log.
          term += 1;
          const snapshot = snapshotAt(last() + 3 + rng.int(5), term);
          const hardState = { term, vote: 'n2', commit: snapshot.meta.index };
          await run({ kind: 'persist', snapshot, entries: [], hardState }, () => storage.persist({ snapshot, entries: [], hardState }));
        } else {
          // Entries from the leader; now and then a new leader's, replacing an uncommitted suffix.
          let from = last() + 1;
          if (roll < 0.22 && last() > state.hardState.commit) {
            term += 1;
            from = Math.max(state.hardState.commit + 1, first(), last() - rng.int(3));
          }
          const entries = Array.from({ length: 1 + rng.int(3) }, (_, k) => entry(from + k));
          const top = entries[entries.length - 1].index;
          const hardState = rng.chance(0.8) ? { term, vote: 'n1', commit: Math.min(top, Math.max(state.hardState.commit, top - rng.int(3))) } : undefined;
          await run({ kind: 'persist', entries, hardState }, () => storage.persist({ entries, hardState }));
        }
      }
      await storage.close();
    },

    async verify({ dir, files, history }) {
      let state: Logical = { hardState: { term: 0, vote: '', commit: 0 }, snapshot: undefined, entries: [] };
      let inFlight: Op | undefined;
      for (const h of history) {
        if (h.op.kind === 'write-snapshot') continue;
        // The member runs one persist or compaction at a time: only the last can be in flight.
        if (h.outcome === 'in-flight') inFlight = h.op;
        else state = applyOp(state, h.op);
      }
      const storage = storageOn(dir, files);
      const recovered = plain(await storage.load());
      const allowed = candidates(state, inFlight);
      if (!allowed.some((c) => isDeepStrictEqual(c, recovered))) {
        const show = (s: Logical) => `hard state ${JSON.stringify(s.hardState)}, snapshot ${s.snapshot?.meta.index ?? 'none'}, entries ${s.entries.map((e) => `${e.term}/${e.index}`).join(' ')}`;
        throw new Error(`recovered ${show(recovered)}; acknowledged: ${show(state)}${inFlight ? ` (or part of an in-flight ${inFlight.kind})` : ''}`);
      }
      // Recovered means writable again: an append after the crash's torn tail reads back.
      const next: Entry = { index: (recovered.entries.at(-1)?.index ?? recovered.snapshot?.meta.index ?? 0) + 1, term: 99, type: 'normal', data: 'after' };
      await storage.persist({ entries: [next] });
      await storage.close();
      const again = plain(await storageOn(dir, files).load());
      if (!isDeepStrictEqual(again.entries.at(-1), next)) throw new Error(`an entry persisted after recovery did not read back (found ${JSON.stringify(again.entries.at(-1))})`);
    },
  };
}

test('Raft file storage: no acknowledged entry, hard state or snapshot is lost or changed by a power cut, compactions and installs included', async (t) => {
  const settings = crashCheckSettings({ states: 1_000, seed: 24 });
  const report = await checkCrashConsistency(raftWorkload(), { store: 'Raft file storage', ...settings });
  const lines = describeReport(report, REPLAY);
  for (const line of lines) t.log(line);
  t.deepEqual(report.failures, [], lines.join('\n'));
  if (settings.point === undefined) t.true(report.explored >= settings.states, `only ${report.explored} distinct crash states`);
});
