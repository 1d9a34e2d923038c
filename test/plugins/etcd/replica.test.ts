import test from 'ava';
import {
  kvStateMachine,
  type KvCommand,
  type KvResult,
  type KvState,
} from '@baton/conformance/internal/kv-state-machine.js';
import {
  decodeEntry,
  encodeEntry,
  fingerprintOf,
  type LogEntry,
} from '@baton/plugin-etcd/internal/log-entry.js';
import { ApplyFailure, Replica } from '@baton/plugin-etcd/internal/replica.js';

const replica = () => new Replica<KvState, KvCommand, KvResult>(kvStateMachine, 100);
const put = (value: string, key?: string): LogEntry => ({
  kind: 'command',
  id: `p-${value}`,
  term: 3,
  command: { op: 'put', key: 'k', value },
  ...(key === undefined ? {} : { key, fingerprint: fingerprintOf({ op: 'put', key: 'k', value }) }),
});

test('entries apply in sequence at the position (term carried by the entry, index = revision)', (t) => {
  const r = replica();
  r.apply(1, 10, { kind: 'bootstrap', voters: ['b', 'a'] });
  const outcome = r.apply(2, 14, put('v'));
  t.deepEqual(outcome, {
    kind: 'applied',
    id: 'p-v',
    position: { term: 3, index: 14 },
    command: { op: 'put', key: 'k', value: 'v' },
    result: { op: 'put', previous: null },
  });
  t.deepEqual(r.voters, ['a', 'b'], 'bootstrap sets the sorted voters');
  t.deepEqual(r.state.lastPosition, { term: 3, index: 14 });
  t.throws(() => r.apply(4, 20, put('skip')), { instanceOf: RangeError }, 'a gap is refused');
});

test('the term never decreases along the log, even if an entry carries an older one', (t) => {
  const r = replica();
  r.apply(1, 5, { ...put('a'), term: 7 } as LogEntry);
  const outcome = r.apply(2, 6, { ...put('b'), term: 2 } as LogEntry);
  t.is(outcome.kind === 'applied' && outcome.position.term, 7);
});

test('a second entry under a remembered key replays with the same command and is refused with another', (t) => {
  const r = replica();
  r.apply(1, 1, put('v', 'key'));
  const again = r.apply(2, 2, { ...put('v', 'key'), id: 'other' } as LogEntry);
  t.is(again.kind, 'replayed');
  const reused = r.apply(3, 3, put('w', 'key'));
  t.deepEqual(reused, { kind: 'key_reused', id: 'p-w', key: 'key' });
  t.is(r.state.commandsApplied, 1, 'neither was applied');
  t.is(r.seq, 3, 'both still advance the log');
});

test('malformed and forged entries are skipped alike on every member', (t) => {
  const r = replica();
  const garbage = r.apply(1, 1, decodeEntry(Buffer.from('{not json')));
  t.is(garbage.kind, 'skipped');
  const forged = r.apply(2, 2, { ...put('v', 'key'), fingerprint: 'not-the-hash' } as LogEntry);
  t.is(forged.kind, 'skipped');
  t.is(r.state.commandsApplied, 0);
  t.is(decodeEntry(encodeEntry(put('x'))).kind, 'command', 'an encoded entry decodes');
  t.is(
    decodeEntry(JSON.stringify({ kind: 'command', id: 'i', term: 1, command: 1, key: 'k' })).kind,
    'malformed',
  );
});

test('voter changes call membershipChanged, and the last voter cannot be removed', (t) => {
  const r = replica();
  r.apply(1, 1, { kind: 'bootstrap', voters: ['a'] });
  const added = r.apply(2, 2, { kind: 'voters', id: 'x', term: 1, change: 'add', voter: 'b' });
  t.like(added, { kind: 'voters', changed: true });
  t.deepEqual(r.state.voters, ['a', 'b']);
  const again = r.apply(3, 3, { kind: 'voters', id: 'y', term: 1, change: 'add', voter: 'b' });
  t.like(again, { kind: 'voters', changed: false });
  r.apply(4, 4, { kind: 'voters', id: 'z', term: 1, change: 'remove', voter: 'a' });
  const last = r.apply(5, 5, { kind: 'voters', id: 'w', term: 1, change: 'remove', voter: 'b' });
  t.like(last, { kind: 'voters', changed: false });
  t.regex((last as { refusal?: string }).refusal ?? '', /last voter/);
  t.deepEqual(r.voters, ['b']);
});

test('a snapshot restores the state, the window and the voters exactly', (t) => {
  const r = replica();
  r.apply(1, 1, { kind: 'bootstrap', voters: ['a'] });
  r.apply(2, 4, put('v', 'key'));
  const copy = replica();
  copy.restore(JSON.parse(JSON.stringify(r.snapshot())));
  t.deepEqual(copy.snapshot(), r.snapshot());
  t.deepEqual(copy.decision('key'), r.decision('key'));
  const next = copy.apply(3, 9, put('w'));
  t.is(next.kind, 'applied', 'it continues after the snapshot');
});

test('a throwing state machine stops applying with the entry named', (t) => {
  const r = new Replica<KvState, KvCommand, KvResult>(
    {
      ...kvStateMachine,
      apply: () => {
        throw new Error('boom');
      },
    },
    10,
  );
  const error = t.throws(() => r.apply(1, 1, put('v')), { instanceOf: ApplyFailure });
  t.regex(error!.message, /entry 1.*boom/);
  t.is(r.seq, 0, 'the entry is not counted as applied');
});

test('entries of one transaction share its revision and take consecutive indexes; later transactions stay above them', (t) => {
  const r = replica();
  const positions = [
    [1, 10],
    [2, 10],
    [3, 10],
    [4, 11],
    [5, 20],
  ].map(([seq, revision]) => {
    const outcome = r.apply(seq, revision, put(`v${seq}`));
    return outcome.kind === 'applied' ? outcome.position.index : -1;
  });
  t.deepEqual(positions, [10, 11, 12, 13, 20]);
});
