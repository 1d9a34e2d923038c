import test from 'ava';
import {
  NotAppendedError,
  OutcomeUnknownError,
  ReadUnavailableError,
  type Leadership,
} from '@baton/contracts/internal/metadata-consensus.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import {
  kvStateMachine,
  type KvCommand,
} from '@baton/conformance/internal/kv-state-machine.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';

const put = (key: string, value: string): KvCommand => ({ op: 'put', key, value });

test('propose applies synchronously, before the promise settles, at increasing positions', async (t) => {
  const c = new LocalConsensus(kvStateMachine, { term: 3 });
  const first = c.propose(put('a', '1'));
  t.is(c.view().state.data.a, '1');
  t.deepEqual(c.view().applied, { term: 3, index: 1 });
  const second = await c.propose(put('a', '2'));
  t.deepEqual((await first).position, { term: 3, index: 1 });
  t.deepEqual(second, {
    position: { term: 3, index: 2 },
    result: { op: 'put', previous: '1' },
    replayed: false,
  });
  t.deepEqual(c.view().state.lastPosition, { term: 3, index: 2 });
});

test('failNext without afterApply refuses the next proposal and applies nothing', async (t) => {
  const c = new LocalConsensus(kvStateMachine);
  c.failNext(new NotAppendedError('queue_saturated', 'injected'));
  const error = await t.throwsAsync(c.propose(put('a', '1')), { instanceOf: NotAppendedError });
  t.is(error?.reason, 'queue_saturated');
  t.is(c.view().applied.index, 0);
  t.is((await c.propose(put('a', '1'))).position.index, 1);
});

test('failNext with afterApply applies, loses the answer, and a retry with the key learns the decision', async (t) => {
  const c = new LocalConsensus(kvStateMachine);
  c.failNext(new OutcomeUnknownError('leadership_lost', 'injected'), { afterApply: true });
  await t.throwsAsync(c.propose(put('a', '1'), { idempotencyKey: 'k' }), {
    instanceOf: OutcomeUnknownError,
  });
  t.is(c.view().state.data.a, '1');
  const retry = await c.propose(put('a', '1'), { idempotencyKey: 'k' });
  t.deepEqual(retry, {
    position: { term: 1, index: 1 },
    result: { op: 'put', previous: null },
    replayed: true,
  });
  t.is(c.view().state.commandsApplied, 1);
});

test('failNext refuses a NotAppendedError after applying, which would be a lie', (t) => {
  const c = new LocalConsensus(kvStateMachine);
  t.throws(() => c.failNext(new NotAppendedError('no_leader', 'x'), { afterApply: true }), {
    instanceOf: TypeError,
    message: /OutcomeUnknownError/,
  });
});

test('held proposals wait until release, then commit in arrival order', async (t) => {
  const c = new LocalConsensus(kvStateMachine);
  c.hold();
  const a = c.propose(put('k', 'a'));
  const b = c.propose(put('k', 'b'));
  await c.whenHeld(2);
  t.is(c.heldCount, 2);
  t.is(c.view().applied.index, 0);
  c.release();
  t.is((await a).position.index, 1);
  t.deepEqual((await b).result, { op: 'put', previous: 'a' });
  t.is(c.view().state.data.k, 'b');
});

test('aborting a held proposal answers OutcomeUnknownError(aborted) and the entry still commits on release', async (t) => {
  const c = new LocalConsensus(kvStateMachine);
  c.hold();
  const controller = new AbortController();
  const pending = c.propose(put('k', 'v'), { signal: controller.signal, idempotencyKey: 'op-1' });
  await c.whenHeld();
  controller.abort();
  const error = await t.throwsAsync(pending, { instanceOf: OutcomeUnknownError });
  t.is(error?.reason, 'aborted');
  c.release();
  t.is(c.view().state.data.k, 'v');
  t.true((await c.propose(put('k', 'v'), { idempotencyKey: 'op-1' })).replayed);
});

test('a held proposal times out through the injected clock', async (t) => {
  const clock = new VirtualClock();
  const c = new LocalConsensus(kvStateMachine, { clock });
  c.hold();
  const pending = c.propose(put('k', 'v'), { timeoutMs: 500 });
  clock.advance(499);
  t.is(c.heldCount, 1);
  clock.advance(1);
  const error = await t.throwsAsync(pending, { instanceOf: OutcomeUnknownError });
  t.is(error?.reason, 'timeout');
});

test('two held proposals under one key: the first decides, the second replays it', async (t) => {
  const c = new LocalConsensus(kvStateMachine);
  c.hold();
  const first = c.propose(put('k', 'v'), { idempotencyKey: 'same' });
  const second = c.propose(put('k', 'v'), { idempotencyKey: 'same' });
  const other = c.propose(put('k', 'w'), { idempotencyKey: 'same' });
  c.release();
  t.false((await first).replayed);
  t.deepEqual(await second, { ...(await first), replayed: true });
  const error = await t.throwsAsync(other, { instanceOf: NotAppendedError });
  t.is(error?.reason, 'key_reused');
  t.is(c.view().state.commandsApplied, 1);
});

test('losing leadership fails held proposals as leadership_lost, refuses new ones, and tells listeners', async (t) => {
  const c = new LocalConsensus(kvStateMachine, { self: 'n1' });
  const seen: Leadership[] = [];
  c.onLeadership((l) => seen.push(l));
  c.hold();
  const pending = c.propose(put('k', 'v'));
  c.setLeadership({ isLeader: false, leader: 'n2' });
  t.is(
    (await t.throwsAsync(pending, { instanceOf: OutcomeUnknownError }))?.reason,
    'leadership_lost',
  );
  t.deepEqual(seen, [{ self: 'n1', isLeader: false, leader: 'n2', term: 2 }]);
  t.is(
    (await t.throwsAsync(c.propose(put('k', 'v')), { instanceOf: NotAppendedError }))?.reason,
    'no_leader',
  );
  await t.throwsAsync(c.read(), { instanceOf: ReadUnavailableError });
  t.is(c.heldCount, 0);
  c.setLeadership({ isLeader: true });
  t.deepEqual(c.leadership(), { self: 'n1', isLeader: true, leader: 'n1', term: 3 });
  c.release();
  t.deepEqual((await c.propose(put('k', 'w'))).position, { term: 3, index: 1 });
  t.throws(() => c.setLeadership({ isLeader: true, term: 2 }), { instanceOf: RangeError });
});

test('stop fails held proposals as outcome unknown and refuses new ones as not appended', async (t) => {
  const c = new LocalConsensus(kvStateMachine);
  c.hold();
  const pending = c.propose(put('k', 'v'));
  c.stop();
  t.is((await t.throwsAsync(pending, { instanceOf: OutcomeUnknownError }))?.reason, 'stopped');
  t.is(
    (await t.throwsAsync(c.propose(put('k', 'v')), { instanceOf: NotAppendedError }))?.reason,
    'stopped',
  );
  await t.throwsAsync(c.read(), { instanceOf: ReadUnavailableError });
});

test('a state machine that throws stops the member and the error is reported', async (t) => {
  const broken = {
    ...kvStateMachine,
    apply: () => {
      throw new Error('bug in apply');
    },
  };
  const c = new LocalConsensus(broken);
  await t.throwsAsync(c.propose(put('k', 'v')), { message: 'bug in apply' });
  t.is((c.failure as Error).message, 'bug in apply');
  const error = await t.throwsAsync(c.propose(put('k', 'v')), { instanceOf: NotAppendedError });
  t.regex(error!.message, /state machine threw: Error: bug in apply/);
});

test('a watcher that proposes sees its entry after every watcher saw the current one', async (t) => {
  const c = new LocalConsensus(kvStateMachine);
  const order: string[] = [];
  c.watch((_view, entry) => {
    order.push(`first@${entry.position.index}`);
    if (entry.position.index === 1) void c.propose(put('b', '2'));
  });
  c.watch((view, entry) => {
    order.push(`second@${entry.position.index}`);
    t.deepEqual(view.applied, entry.position);
  });
  await c.propose(put('a', '1'));
  t.deepEqual(order, ['first@1', 'second@1', 'first@2', 'second@2']);
});

test('membership changes take a log position and reach membershipChanged; removing self steps down', async (t) => {
  const c = new LocalConsensus(kvStateMachine, { self: 'n1' });
  await c.addVoter('n2');
  t.deepEqual(c.membership(), { voters: ['n1', 'n2'] });
  t.deepEqual(c.view().state.voters, ['n1', 'n2']);
  t.deepEqual(c.view().applied, { term: 1, index: 1 });
  await c.addVoter('n2');
  t.is(c.view().applied.index, 1, 'adding an existing voter appends nothing');
  await c.removeVoter('n1');
  t.deepEqual(c.membership(), { voters: ['n2'] });
  t.false(c.leadership().isLeader);
  const lone = new LocalConsensus(kvStateMachine);
  await t.throwsAsync(lone.removeVoter('local'), { message: /last voter/ });
});

test('a snapshot carries state, position and the idempotency window', async (t) => {
  const c = new LocalConsensus(kvStateMachine, { term: 4 });
  const original = await c.propose(put('k', 'v'), { idempotencyKey: 'op' });
  const snapshot = JSON.parse(JSON.stringify(c.snapshot()));
  const resumed = LocalConsensus.fromSnapshot(kvStateMachine, snapshot);
  t.deepEqual(resumed.view().applied, { term: 4, index: 1 });
  t.is(resumed.view().state.data.k, 'v');
  t.deepEqual(await resumed.propose(put('k', 'v'), { idempotencyKey: 'op' }), {
    ...original,
    replayed: true,
  });
  t.is(
    (
      await t.throwsAsync(resumed.propose(put('k', 'x'), { idempotencyKey: 'op' }), {
        instanceOf: NotAppendedError,
      })
    )?.reason,
    'key_reused',
  );
});

test('the idempotency window forgets the oldest key when full', async (t) => {
  const c = new LocalConsensus(kvStateMachine, { idempotencyWindow: 2 });
  await c.propose(put('k', '1'), { idempotencyKey: 'a' });
  await c.propose(put('k', '2'), { idempotencyKey: 'b' });
  await c.propose(put('k', '3'), { idempotencyKey: 'c' });
  t.true((await c.propose(put('k', '3'), { idempotencyKey: 'c' })).replayed);
  t.false((await c.propose(put('k', '1'), { idempotencyKey: 'a' })).replayed);
});
