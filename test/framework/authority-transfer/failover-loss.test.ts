import test from 'ava';
import type { FeedEntry } from '@baton/authority-transfer/internal/change-feed.js';
import type { AppliedPosition } from '@baton/authority-transfer/internal/feed-replicas.js';
import { lossEvidence, lossOf, MAX_LOSS_LISTED, readFailoverLoss } from '@baton/authority-transfer/internal/failover-loss.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { ScriptedFrontierProbe } from './scripted-frontier-probe.js';

/** Replicas of the old home's feeds as the proposing member holds them: entries from `base` + 1 on. */
function replicas(feeds: Record<string, { incarnation: string; base?: number; entries: Omit<FeedEntry, 'serial'>[] }>) {
  const entriesOf = (origin: string): FeedEntry[] => {
    const feed = feeds[origin];
    return feed ? feed.entries.map((e, i) => ({ ...e, serial: (feed.base ?? 0) + i + 1 })) : [];
  };
  return {
    applied(origin: string): AppliedPosition {
      const feed = feeds[origin];
      return feed ? { incarnation: feed.incarnation, serial: (feed.base ?? 0) + feed.entries.length, storage: 's' } : { incarnation: undefined, serial: 0, storage: undefined };
    },
    entries(origin: string, after: number, limit: number): FeedEntry[] {
      return entriesOf(origin).filter((e) => e.serial > after).slice(0, limit);
    },
  };
}

const write = (authority: string) => ({ authority, operation: 'op', epoch: 1 });

test("the loss lists the authority's serials the proposer holds past what the new home applied, and says what it could not read", async (t) => {
  const probe = new ScriptedFrontierProbe(new SystemClock());
  probe.answer('east', 2);
  const loss = await readFailoverLoss('proj', ['west-1', 'west-2'], 'east', {
    self: 'north-1',
    replicas: replicas({ 'west-1': { incarnation: 'i1', entries: [write('proj'), write('proj'), write('proj'), write('lib'), write('proj')] } }),
    probe,
    timeoutMs: 1_000,
  });
  t.deepEqual(loss, {
    lost: [
      { member: 'west-1', serial: 3 },
      { member: 'west-1', serial: 5 },
    ],
    lost_count: 2,
    feeds: [{ member: 'west-1', incarnation: 'i1', pulled: 5, applied: 2 }],
    unknown: [{ member: 'west-2', why: 'north-1 never pulled its feed' }],
    read_by: 'north-1',
  });
  t.deepEqual(probe.calls.map((c) => [c.target, c.origin]), [['east', { member: 'west-1', incarnation: 'i1' }]], 'the new home is asked about the incarnation the proposer holds');
});

test('a new home that gives no reading, or a replica trimmed past its reading, is named as unknown rather than guessed', async (t) => {
  const probe = new ScriptedFrontierProbe(new SystemClock());
  probe.unreachable('east');
  const unreachable = await readFailoverLoss('proj', ['west-1'], 'east', {
    self: 'east-1',
    replicas: replicas({ 'west-1': { incarnation: 'i1', entries: [write('proj')] } }),
    probe,
    timeoutMs: 1_000,
  });
  t.deepEqual(unreachable.unknown, [{ member: 'west-1', why: 'no member of east answered how far it applied the feed' }]);
  t.is(unreachable.lost_count, 0);

  probe.answer('east', 1);
  const trimmed = await readFailoverLoss('proj', ['west-1'], 'east', {
    self: 'east-1',
    replicas: replicas({ 'west-1': { incarnation: 'i1', base: 4, entries: [write('proj'), write('proj')] } }),
    probe,
    timeoutMs: 1_000,
  });
  t.deepEqual(trimmed.lost, [
    { member: 'west-1', serial: 5 },
    { member: 'west-1', serial: 6 },
  ]);
  t.deepEqual(trimmed.unknown, [{ member: 'west-1', why: 'east-1 no longer holds serials 2-4 of its feed' }]);
});

test('the list is bounded, the count is not; the evidence the state machine seals parses back to the report', async (t) => {
  const probe = new ScriptedFrontierProbe(new SystemClock());
  probe.answer('east', 0);
  const loss = await readFailoverLoss('proj', ['west-1'], 'east', {
    self: 'east-1',
    replicas: replicas({ 'west-1': { incarnation: 'i1', entries: Array.from({ length: MAX_LOSS_LISTED + 20 }, () => write('proj')) } }),
    probe,
    timeoutMs: 1_000,
  });
  t.is(loss.lost.length, MAX_LOSS_LISTED);
  t.is(loss.lost_count, MAX_LOSS_LISTED + 20);
  t.deepEqual(lossOf(lossEvidence(loss)), loss);
  t.is(lossEvidence('not a report'), undefined);
  t.is(lossOf('{not json'), undefined);
});
