import test from 'ava';
import { join } from 'node:path';
import { CompactingWal } from '@baton/stream-transfer/internal/compacting-wal.js';
import { FileWal } from '@baton/stream-transfer/internal/file-wal.js';
import type { WalEntry } from '@baton/stream-transfer/internal/wal.js';
import { recoverSessions } from '@baton/stream-transfer/internal/wal-recovery.js';
import { checkCrashConsistency, type CrashWorkload } from '@baton/testing/internal/crash/crash-checker.js';
import { crashCheckSettings, describeReport } from '@baton/testing/internal/crash/crash-report.js';

const REPLAY = 'npx ava dist/test/framework/stream-transfer/wal-crash-consistency.test.js';
const STREAMS = ['s0', 's1', 's2', 's3'];

/** One WAL append of the workload: the entry it logs. */
type Op = WalEntry;

/** What the node would hold in memory for one stream: enough to say what is live at a compaction. */
interface Session {
  status: 'open' | 'closed' | 'settled';
  next: number;
  flushedUpTo: number;
  unflushed: { first: number; bodies: string[] }[];
}

function open(stream: string): WalEntry {
  return { t: 'open', stream, epoch: 1, next: 0, producers: {} };
}

/** What is live, as a node computes it at a compaction: each session's open and unflushed records, or its close. */
function liveEntries(sessions: Map<string, Session>): WalEntry[] {
  const out: WalEntry[] = [];
  for (const [stream, s] of sessions) {
    if (s.status === 'settled') continue;
    if (s.status === 'closed') {
      out.push({ t: 'closed', stream, epoch: 1, tail: s.next, producers: {} });
      continue;
    }
    out.push({ t: 'open', stream, epoch: 1, next: s.flushedUpTo, producers: {} });
    for (const r of s.unflushed) out.push({ t: 'records', stream, epoch: 1, first: r.first, bodies: r.bodies });
  }
  return out;
}

function apply(sessions: Map<string, Session>, e: WalEntry): void {
  const s = sessions.get(e.stream);
  if (e.t === 'open') sessions.set(e.stream, { status: 'open', next: e.next, flushedUpTo: e.next, unflushed: [] });
  else if (!s) return;
  else if (e.t === 'records') {
    s.unflushed.push({ first: e.first, bodies: e.bodies });
    s.next = e.first + e.bodies.length;
  } else if (e.t === 'flushed') {
    s.flushedUpTo = e.upTo;
    s.unflushed = s.unflushed.filter((r) => r.first + r.bodies.length > e.upTo);
  } else if (e.t === 'closed') {
    s.status = 'closed';
    s.unflushed = [];
  } else s.status = 'settled';
}

/**
 * A node's WAL traffic on four streams: opens, appends of records (up to three at once, on
 * different streams), flushes, closes and settles, through a CompactingWal over a FileWal whose
 * small threshold compacts every few appends, with one restart (close and reopen) midway.
 */
function walWorkload(): CrashWorkload<Op> {
  return {
    async run({ dir, files, rng, history }) {
      const sessions = new Map<string, Session>();
      const walDir = join(dir, 'wal');
      const openWal = async () => new CompactingWal(await FileWal.open(walDir, { files }), () => liveEntries(sessions), 900);
      let wal = await openWal();
      // As a node does, the session holds an entry before the WAL append that logs it, so a
      // compaction the append sets off keeps it.
      const log = async (e: WalEntry) => {
        apply(sessions, e);
        await history.run(e, () => wal.append([e]));
      };
      for (const stream of STREAMS) await log(open(stream));
      for (let step = 0; step < 90; step++) {
        if (step === 45) {
          await wal.append([]);
          await wal.close();
          wal = await openWal();
        }
        const batch: WalEntry[] = [];
        for (const stream of STREAMS) {
          const s = sessions.get(stream)!;
          if (s.status !== 'open' || !rng.chance(0.6)) continue;
          const roll = rng.next();
          // A flush stores whole records entries (one segment each), so it ends where one does.
          if (roll < 0.15 && s.unflushed.length > 0) {
            const through = s.unflushed[rng.int(s.unflushed.length)];
            batch.push({ t: 'flushed', stream, epoch: 1, upTo: through.first + through.bodies.length });
          }
          else if (roll < 0.18 && step > 60) batch.push({ t: 'closed', stream, epoch: 1, tail: s.next, producers: {} });
          else {
            const bodies = Array.from({ length: 1 + rng.int(3) }, () => `${stream}-${s.next}-${rng.hex(1 + rng.int(12))}`);
            batch.push({ t: 'records', stream, epoch: 1, first: s.next, bodies });
          }
        }
        await Promise.all(batch.map(log));
        for (const [stream, s] of sessions) if (s.status === 'closed' && rng.chance(0.3)) await log({ t: 'settled', stream, epoch: 1 });
      }
      await wal.append([]);
      await wal.close();
    },

    async verify({ dir, files, history }) {
      const wal = await FileWal.open(join(dir, 'wal'), { files });
      const sessions = recoverSessions(await wal.replay());
      await wal.close();
      for (const stream of STREAMS) {
        const mine = history.filter((h) => h.op.stream === stream);
        const acked = (t: WalEntry['t']) => mine.some((h) => h.op.t === t && h.outcome === 'acknowledged');
        const started = (t: WalEntry['t']) => mine.some((h) => h.op.t === t);
        const bodies = new Map<number, string>();
        const ackedRecords: number[] = [];
        let flushLimit = 0;
        for (const h of mine) {
          if (h.op.t === 'records') {
            h.op.bodies.forEach((b, k) => bodies.set((h.op as { first: number }).first + k, b));
            if (h.outcome === 'acknowledged') ackedRecords.push(...h.op.bodies.map((_, k) => (h.op as { first: number }).first + k));
          }
          if (h.op.t === 'flushed') flushLimit = Math.max(flushLimit, h.op.upTo);
        }
        const s = sessions.get(stream);
        if (!s) {
          if (acked('open') && !started('settled')) throw new Error(`${stream}: its acknowledged open is missing from the WAL`);
          continue;
        }
        if (acked('closed') && s.status === 'open') throw new Error(`${stream}: its acknowledged close is missing (the session recovers as open)`);
        if (s.status === 'settled' && !started('settled')) throw new Error(`${stream}: recovers as settled, which was never logged`);
        if (s.status !== 'open') continue;
        if (s.flushedUpTo > flushLimit) throw new Error(`${stream}: recovers as flushed up to ${s.flushedUpTo}, but no flush past ${flushLimit} was logged`);
        const recovered = new Map<number, string>();
        for (const r of s.unflushed) r.bodies.forEach((b, k) => recovered.set(r.first + k, b));
        for (const [offset, body] of recovered) {
          if (bodies.get(offset) !== body) throw new Error(`${stream}: record ${offset} recovers as ${JSON.stringify(body)}, but ${JSON.stringify(bodies.get(offset))} was logged`);
        }
        for (const offset of ackedRecords) {
          if (offset >= s.flushedUpTo && !recovered.has(offset)) throw new Error(`${stream}: acknowledged record ${offset} (${bodies.get(offset)}) is missing, and not flushed (flushed up to ${s.flushedUpTo})`);
        }
      }
    },
  };
}

test('stream WAL: no acknowledged entry is lost or changed by a power cut, compactions and a restart included', async (t) => {
  const settings = crashCheckSettings({ states: 1_000, seed: 24 });
  const report = await checkCrashConsistency(walWorkload(), { store: 'stream WAL (FileWal + CompactingWal)', ...settings });
  const lines = describeReport(report, REPLAY);
  for (const line of lines) t.log(line);
  t.deepEqual(report.failures, [], lines.join('\n'));
  if (settings.point === undefined) t.true(report.explored >= settings.states, `only ${report.explored} distinct crash states`);
});

test('stream WAL: the checker finds the directory fsync the WAL used to skip (a lost file, an undone compaction)', async (t) => {
  const report = await checkCrashConsistency(walWorkload(), {
    store: 'stream WAL without directory fsyncs',
    seed: 24,
    states: 600,
    maxFailures: 600,
    recording: { skipDirectorySyncs: true },
  });
  t.log(describeReport({ ...report, failures: report.failures.slice(0, 1) }, REPLAY).join('\n'));
  const lostWith = (change: string) => report.failures.filter((f) => f.lost.includes(`lost: ${change}`) && /acknowledged/.test(f.message));
  t.true(lostWith('create wal/streams.wal').length > 0, 'a WAL file whose name was never made durable loses acknowledged entries');
  t.true(lostWith('rename wal/streams.wal.compact -> wal/streams.wal').length > 0, 'an undone compaction loses the entries acknowledged after it');
});
