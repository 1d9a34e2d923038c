import test from 'ava';
import { join } from 'node:path';
import type { FeedEntry } from '@baton/authority-transfer/internal/change-feed.js';
import { FeedLog } from '@baton/authority-transfer/internal/feed-log.js';
import { DirectoryFiles } from '@baton/kernel/internal/byte-files.js';
import type { DurableFiles } from '@baton/kernel/internal/durable-files.js';
import { checkCrashConsistency, type CrashWorkload } from '@baton/testing/internal/crash/crash-checker.js';
import { crashCheckSettings, describeReport } from '@baton/testing/internal/crash/crash-report.js';

const REPLAY = 'npx ava dist/test/framework/authority-transfer/feed-log-crash-consistency.test.js';

/** What the feed's owner asked of its log: mint its incarnation, append, trim, or reset to a new history. */
type Op =
  | { kind: 'open'; incarnation: string }
  | { kind: 'append'; entries: FeedEntry[] }
  | { kind: 'trim'; through: number }
  | { kind: 'reset'; incarnation: string };

const logOn = (dir: string, files: DurableFiles) => new FeedLog(new DirectoryFiles(join(dir, 'feed'), files), { segmentEntries: 4 });

/**
 * A change feed's storage: appends of one to three entries, trims of whole old segments, two
 * resets into a new incarnation (a replica following its origin), and a restart midway.
 */
function feedWorkload(): CrashWorkload<Op> {
  return {
    async run({ dir, files, rng, history }) {
      let log = logOn(dir, files);
      await history.run({ kind: 'open', incarnation: 'inc-0' }, () => log.open(() => 'inc-0'));
      let resets = 0;
      for (let step = 0; step < 80; step++) {
        if (step === 40) {
          await log.close();
          log = logOn(dir, files);
          await log.open();
        }
        const roll = rng.next();
        if (roll < 0.1 && log.last > 4) {
          const through = log.trimmed + 1 + rng.int(log.last - log.trimmed);
          await history.run({ kind: 'trim', through }, () => log.trimThrough(through));
        } else if (roll < 0.13 && resets < 2) {
          const incarnation = `inc-${++resets}`;
          await history.run({ kind: 'reset', incarnation }, () => log.reset(incarnation));
        } else {
          const entries = Array.from({ length: 1 + rng.int(3) }, (_, k) => ({
            serial: log.last + 1 + k, authority: rng.pick(['npm:a', 'pypi:b']), operation: `op-${step}-${k}-${rng.hex(2)}`, epoch: 1 + rng.int(3),
          }));
          await history.run({ kind: 'append', entries }, () => log.append(entries));
        }
      }
      await log.close();
    },

    async verify({ dir, files, history }) {
      // The owner waits for each call: only the last one started can be in flight.
      const last = history.at(-1);
      const inFlight = last?.outcome === 'in-flight' ? last.op : undefined;
      let incarnation: string | undefined;
      let acknowledged = new Map<number, FeedEntry>();
      let started = new Map<number, FeedEntry>();
      let trimmedThrough = 0;
      for (const { op, outcome } of history) {
        if (op.kind === 'reset' && outcome === 'acknowledged') {
          acknowledged = new Map();
          started = new Map();
          trimmedThrough = 0;
        }
        if ((op.kind === 'open' || op.kind === 'reset') && outcome === 'acknowledged') incarnation = op.incarnation;
        if (op.kind === 'append') {
          for (const e of op.entries) {
            started.set(e.serial, e);
            if (outcome === 'acknowledged') acknowledged.set(e.serial, e);
          }
        }
        if (op.kind === 'trim') trimmedThrough = Math.max(trimmedThrough, op.through);
      }
      const log = logOn(dir, files);
      await log.open();
      const recovered = log.read(0, 100_000);
      await log.close();
      const newHistory = inFlight?.kind === 'reset' || (inFlight?.kind === 'open' && incarnation === undefined) ? inFlight.incarnation : undefined;
      if (log.incarnation !== incarnation && !(newHistory !== undefined && log.incarnation === newHistory) && !(incarnation === undefined && log.incarnation === undefined)) {
        throw new Error(`the feed recovers incarnation ${log.incarnation}; ${incarnation} was acknowledged${newHistory ? ` (${newHistory} was being written)` : ''}`);
      }
      if (log.incarnation !== incarnation) {
        if (recovered.length > 0) throw new Error(`the new incarnation ${log.incarnation} recovers with ${recovered.length} entries of the old one`);
        return;
      }
      for (const e of recovered) {
        const put = started.get(e.serial);
        if (JSON.stringify(put) !== JSON.stringify(e)) throw new Error(`serial ${e.serial} recovers as ${JSON.stringify(e)}, but ${JSON.stringify(put)} was appended`);
      }
      // A reset in flight removes old segments first: what is left is a shorter feed, never a gapped one.
      if (inFlight?.kind === 'reset') return;
      const kept = new Set(recovered.map((e) => e.serial));
      for (const serial of acknowledged.keys()) {
        if (serial > trimmedThrough && !kept.has(serial)) throw new Error(`acknowledged serial ${serial} is missing (trimmed through ${trimmedThrough}; the feed holds ${log.trimmed + 1}..${log.last})`);
      }
      const lastAcknowledged = Math.max(0, ...acknowledged.keys());
      if (log.last < lastAcknowledged) throw new Error(`the feed ends at ${log.last}, before the acknowledged serial ${lastAcknowledged}`);
    },
  };
}

test('change feed log: no acknowledged entry or incarnation is lost or changed by a power cut, trims and resets included', async (t) => {
  const settings = crashCheckSettings({ states: 1_000, seed: 24 });
  const report = await checkCrashConsistency(feedWorkload(), { store: 'change feed log', ...settings });
  const lines = describeReport(report, REPLAY);
  for (const line of lines) t.log(line);
  t.deepEqual(report.failures, [], lines.join('\n'));
  if (settings.point === undefined) t.true(report.explored >= settings.states, `only ${report.explored} distinct crash states`);
});
