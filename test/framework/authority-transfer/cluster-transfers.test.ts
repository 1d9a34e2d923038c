import test, { type ExecutionContext } from 'ava';
import {
  AuthorityFrozenError,
  CatchUpTimeoutError,
  IdempotencyKeyMismatchError,
  MoveRefusedError,
  NotHomeError,
  OwnershipUnavailableError,
  SourceUnreadableError,
  TransferCancelledError,
  TransferCommittedError,
  TransferInProgressError,
} from '@baton/authority-transfer/internal/transfer-errors.js';
import { OutcomeUnknownError } from '@baton/contracts/internal/metadata-consensus.js';
import { flushMicrotasks } from '@baton/conformance/internal/virtual-clock.js';
import { clusterHarness } from './cluster-harness.js';
import { request, settle } from './harness.js';

type Cluster = Awaited<ReturnType<typeof clusterHarness>>;

async function withProj(options?: Parameters<typeof clusterHarness>[0]) {
  const c = await clusterHarness(options);
  await c.log.propose({ type: 'transfer_authority', authority: 'proj', target: 'east' });
  return c;
}

async function writes(c: Cluster, n: number, epoch = 1) {
  for (let i = 0; i < n; i++) await c.members['east-1'].fence.write('proj', epoch, `op${i}`);
}

/** Moves virtual time until `p` settled (probes and sleeps run on the virtual clock). */
async function settled<T>(c: Cluster, p: Promise<T>) {
  const outcome = settle(p);
  let done = false;
  void outcome.then(() => (done = true));
  for (let i = 0; i < 1_000 && !done; i++) await c.clock.advanceAsync(10);
  return outcome;
}

/**
 * Starts east -> north at east-1 and leaves it frozen: the target reaches the barrier (2) but
 * not the final serial (3, a write acknowledged while it waited).
 */
async function frozenTransfer(c: Cluster) {
  await writes(c, 2);
  const run = settle(c.members['east-1'].engine.start(toNorth()));
  await c.clock.advanceAsync(20);
  await c.members['east-1'].fence.write('proj', 1, 'while waiting');
  c.holds('north', eastOrigin(c), 2);
  await c.clock.advanceAsync(100);
  return { run };
}

const eastOrigin = (c: Cluster) => c.members['east-1'].feed.origin();
const toNorth = (overrides = {}) => request({ target: 'north', reason: 'drain east', ...overrides });

test('the barrier is taken from the source member acknowledged writes, whichever member takes the POST', async (t) => {
  const c = await withProj();
  await writes(c, 8);
  c.holds('north', eastOrigin(c), 1);
  const run = settle(c.members['west-1'].engine.start(toNorth()));
  await c.clock.advanceAsync(1_000);
  t.like(c.members['west-1'].engine.status('proj'), { barrier: 8, state: 'AwaitingCatchUp', frozen: false, driver: 'west-1' });
  t.is(c.moves(), 0, 'north has applied east feed only through 1');
  c.holds('north', eastOrigin(c), 8);
  await c.clock.advanceAsync(1_000);
  t.like(await run, { ok: true, value: { barrier: 8, epoch: 2, target: 'north' } });
});

test('writes acknowledged while the transfer waits are covered: the source freezes, records its final serial, and the move commits only once the target reached it', async (t) => {
  const c = await withProj();
  await writes(c, 1);
  const run = settle(c.members['east-1'].engine.start(toNorth()));
  await c.clock.advanceAsync(100);
  await writes(c, 4); // serials 2-5, acknowledged under epoch 1 while the transfer waits
  c.holds('north', eastOrigin(c), 1); // the barrier taken at the POST
  await c.clock.advanceAsync(100);
  const intent = c.log.view().state.transfers.get('proj')!;
  t.true(intent.frozen, 'the target reached the barrier: the source is frozen');
  t.is(intent.sources[0].final, 5, 'the final serial covers every acknowledged write');
  const frozen = await settle(c.members['east-1'].fence.write('proj', 1, 'during the freeze'));
  t.true(!frozen.ok && frozen.error instanceof AuthorityFrozenError && frozen.error.status === 503);
  t.is(c.members['east-1'].feed.serial(), 5, 'the refused write got no serial');
  t.like(c.members['east-1'].engine.status('proj'), { frozen: true, barrier: 5, state: 'AwaitingCatchUp' });
  t.is(c.moves(), 0);
  c.holds('north', eastOrigin(c), 5);
  await c.clock.advanceAsync(100);
  t.like(await run, { ok: true, value: { barrier: 5, epoch: 2 } });
  const after = await settle(c.members['east-1'].fence.write('proj', 1, 'after'));
  t.true(!after.ok && after.error instanceof NotHomeError, 'the old home is fenced');
  t.false(c.log.view().state.transfers.has('proj'));
});

test('one transfer per authority, cluster-wide: a second POST at another member answers 409 naming the running one', async (t) => {
  const c = await withProj();
  await writes(c, 1);
  const first = settle(c.members['east-1'].engine.start(toNorth({ id: 'k1' })));
  await c.clock.advanceAsync(100);
  const second = await settle(c.members['west-1'].engine.start(request({ id: 'k2', target: 'west' })));
  t.true(!second.ok && second.error instanceof TransferInProgressError && second.error.runningId === 'k1');
  await c.members['east-1'].engine.cancel('proj');
  t.like(await first, { ok: false, error: { code: 'transfer_cancelled' } });
  await c.clock.advanceAsync(100);
  c.holds('west', eastOrigin(c), 1);
  const third = settle(c.members['west-1'].engine.start(request({ id: 'k2', target: 'west' })));
  await c.clock.advanceAsync(1_000);
  t.like(await third, { ok: true, value: { id: 'k2', target: 'west', epoch: 2 } }, 'once the first was released, the authority is free');
});

test('with a transfer registered and its source not answering, a POST of another key at any member answers 409 at once naming it, and a cancel then calls that one off', async (t) => {
  const c = await withProj();
  await writes(c, 1);
  const first = settle(c.members['north-1'].engine.start(request({ id: 'k1', target: 'west' })));
  await c.clock.advanceAsync(100);
  t.is(c.log.view().state.transfers.get('proj')?.id, 'k1');
  // East stops answering: a source read would wait on the re-probe schedule until its budget.
  c.sourceDown('east');
  for (const at of ['east-1', 'west-1', 'north-1'] as const) {
    const other = settle(c.members[at].engine.start(toNorth({ id: `k2-${at}` })));
    await c.clock.advanceAsync(10);
    const answer = await other;
    t.true(!answer.ok && answer.error instanceof TransferInProgressError && answer.error.runningId === 'k1', `at ${at}: ${JSON.stringify(answer)}`);
    t.is(c.members[at].engine.status('proj')?.id, 'k1', `${at} shows the registered transfer, not its refused request`);
  }
  await c.members['east-1'].engine.cancel('proj');
  t.like(await first, { ok: false, error: { code: 'transfer_cancelled' } });
  c.sourceAnswers('east');
  c.holds('north', eastOrigin(c), 1);
  c.holds('west', eastOrigin(c), 1);
  await c.clock.advanceAsync(60_000);
  t.is(c.moves(), 0, 'nothing waited unseen to move the authority after the cancel');
});

test('a source that does not tell its serial within a probe timeout: 503 source_unreadable, nothing registered, and the same key commits once it answers', async (t) => {
  const c = await withProj();
  await writes(c, 2);
  c.sourceDown('east');
  const refused = settle(c.members['west-1'].engine.start(toNorth({ id: 'k1' })));
  await c.clock.advanceAsync(5_000);
  t.false(c.log.view().state.transfers.has('proj'), 'waiting on the source registers nothing');
  await c.clock.advanceAsync(5_100);
  const answer = await refused;
  t.true(!answer.ok && answer.error instanceof SourceUnreadableError && answer.error.status === 503, JSON.stringify(answer));
  t.regex((answer as { error: Error }).error.message, /this request registered nothing: retry with Idempotency-Key k1/);
  t.is(c.members['west-1'].engine.status('proj'), undefined, 'no plan is left behind');
  c.sourceAnswers('east');
  c.holds('north', eastOrigin(c), 2);
  const retry = settle(c.members['west-1'].engine.start(toNorth({ id: 'k1' })));
  await c.clock.advanceAsync(1_000);
  t.like(await retry, { ok: true, value: { id: 'k1', barrier: 2, epoch: 2 } });
});

/** `key` reissued at every member for another move (proj to west) is refused with 422. */
async function refusedForAnotherMove(t: ExecutionContext, c: Cluster, key: string, when: string) {
  for (const at of ['east-1', 'west-1', 'north-1'] as const) {
    const other = await settle(c.members[at].engine.start(request({ id: key, target: 'west' })));
    t.true(!other.ok && other.error instanceof IdempotencyKeyMismatchError && other.error.status === 422, `${when}, at ${at}: ${JSON.stringify(other)}`);
  }
}

/** k1 (east -> north) started at east-1 and cancelled at west-1 before it could commit. */
async function calledOffK1(t: ExecutionContext, c: Cluster) {
  await writes(c, 1);
  const first = settle(c.members['east-1'].engine.start(toNorth({ id: 'k1' })));
  await c.clock.advanceAsync(100);
  await c.members['west-1'].engine.cancel('proj');
  t.like(await first, { ok: false, error: { code: 'transfer_cancelled' } });
  await c.clock.advanceAsync(100);
}

test('a key called off may be reissued for the same move at any member, never for another one (422)', async (t) => {
  const c = await withProj();
  await calledOffK1(t, c);
  await refusedForAnotherMove(t, c, 'k1', 'after its cancel');
  t.false(c.log.view().state.transfers.has('proj'), 'the refused reuse registered nothing');
  // Another transfer of the authority called off since does not free the key for another move.
  const second = settle(c.members['west-1'].engine.start(request({ id: 'k2', target: 'west' })));
  await c.clock.advanceAsync(100);
  await c.members['north-1'].engine.cancel('proj');
  t.like(await second, { ok: false, error: { code: 'transfer_cancelled' } });
  await c.clock.advanceAsync(100);
  await refusedForAnotherMove(t, c, 'k1', 'after k2 was called off');
  c.holds('north', eastOrigin(c), 1);
  const again = settle(c.members['north-1'].engine.start(toNorth({ id: 'k1' })));
  await c.clock.advanceAsync(1_000);
  t.like(await again, { ok: true, value: { id: 'k1', target: 'north', epoch: 2 } }, 'the same move under the key is a reissue');
});

test('every member restarted after a cancel (its memory gone) refuses the key for another move and answers a repeated cancel 204, from the replicated state', async (t) => {
  const c = await withProj();
  await calledOffK1(t, c);
  for (const member of Object.values(c.members)) member.restart();
  await refusedForAnotherMove(t, c, 'k1', 'after every member restarted');
  for (const member of Object.values(c.members)) await t.notThrowsAsync(member.engine.cancel('proj'), `a repeated cancel at ${member.id} stays 204`);
  t.false(c.log.view().state.transfers.has('proj'), 'nothing was registered by the refused reuses');
});

test('a cancel at another member releases the registration and lifts the freeze: the driver run answers 409 and nothing moves', async (t) => {
  const c = await withProj();
  const { run } = await frozenTransfer(c);
  t.true(c.log.view().state.transfers.get('proj')!.frozen);
  await c.members['north-1'].engine.cancel('proj');
  const outcome = await run;
  t.true(!outcome.ok && outcome.error instanceof TransferCancelledError);
  await c.clock.advanceAsync(60_000);
  t.is(c.moves(), 0);
  t.false(c.log.view().state.transfers.has('proj'));
  await t.notThrowsAsync(c.members['east-1'].fence.write('proj', 1, 'after the cancel'), 'writes are accepted again');
  await t.notThrowsAsync(c.members['north-1'].engine.cancel('proj'), 'a repeated cancel there stays 204');
});

test('a cancel at another member after the commit answers 409; of an unknown authority 404', async (t) => {
  const c = await withProj();
  c.holds('north', eastOrigin(c), 0);
  t.like(await settled(c, c.members['east-1'].engine.start(toNorth())), { ok: true });
  const late = await settle(c.members['west-1'].engine.cancel('proj'));
  t.true(!late.ok && late.error instanceof TransferCommittedError);
  const unknown = await settle(c.members['west-1'].engine.cancel('nothing'));
  t.like(unknown, { ok: false, error: { status: 404 } });
});

test('the same key at another member waits for the registered transfer outcome and answers the same record', async (t) => {
  const c = await withProj();
  await writes(c, 3);
  const first = settle(c.members['east-1'].engine.start(toNorth()));
  await c.clock.advanceAsync(10);
  const retry = settle(c.members['west-1'].engine.start(toNorth()));
  await c.clock.advanceAsync(10);
  c.holds('north', eastOrigin(c), 3);
  await c.clock.advanceAsync(1_000);
  const a = await first;
  const b = await retry;
  t.true(a.ok && b.ok);
  t.deepEqual((b as { value: unknown }).value, (a as { value: unknown }).value);
  t.is(c.moves(), 1);
  t.truthy(await c.members['west-1'].audit.byId('5f0c-drain-proj'), 'stored where it was answered');
});

test('a registered transfer survives the restart of its member: the freeze is lifted, and the same key resumes it there', async (t) => {
  const c = await withProj();
  const { run } = await frozenTransfer(c);
  t.true(c.log.view().state.transfers.get('proj')?.frozen);
  c.members['east-1'].restart();
  t.like(await run, { ok: false });
  await c.clock.advanceAsync(1_500);
  const intent = c.log.view().state.transfers.get('proj');
  t.like(intent, { id: '5f0c-drain-proj', frozen: false, driver: 'east-1' }, 'still registered, no longer frozen');
  await t.notThrowsAsync(c.members['east-1'].fence.write('proj', 1, 'after the restart')); // serial 4
  const other = await settle(c.members['west-1'].engine.start(request({ id: 'k2', target: 'west' })));
  t.true(!other.ok && other.error instanceof TransferInProgressError, 'the authority is still held by it');
  await c.members['east-1'].fence.write('proj', 1, 'after the restart'); // serial 5
  c.holds('north', eastOrigin(c), 5);
  const resumed = await settled(c, c.members['east-1'].engine.start(toNorth()));
  t.like(resumed, { ok: true, value: { id: '5f0c-drain-proj', barrier: 5, epoch: 2 } });
  t.is(c.moves(), 1);
});

test('a refused POST (wrong source) keeps the recently abandoned record: a repeated cancel still answers 204', async (t) => {
  const c = await withProj();
  c.holds('west', eastOrigin(c), 0);
  t.like(await settled(c, c.members['east-1'].engine.start(request({ id: 'k0' }))), { ok: true }, 'proj now lives in west');
  await c.members['west-1'].fence.write('proj', 2, 'at the new home'); // north never applies it
  const cancelled = settle(c.members['east-1'].engine.start(request({ id: 'k1', source: 'west', target: 'north' })));
  await c.clock.advanceAsync(10);
  await c.members['east-1'].engine.cancel('proj');
  t.like(await cancelled, { ok: false, error: { code: 'transfer_cancelled' } });
  const wrong = await settle(c.members['east-1'].engine.start(request({ id: 'k2', source: 'north', target: 'east' })));
  t.true(!wrong.ok && wrong.error instanceof MoveRefusedError);
  await c.clock.advanceAsync(100);
  await t.notThrowsAsync(c.members['east-1'].engine.cancel('proj'), 'still the abandoned k1, not the committed k0');
});

test('a freeze that outlasts its budget is lifted: writes resume, and the transfer freezes again once the target caught up', async (t) => {
  const c = await withProj({ engine: { freezeBudgetMs: 1_000 } });
  const { run } = await frozenTransfer(c);
  t.true(c.log.view().state.transfers.get('proj')!.frozen);
  await c.clock.advanceAsync(1_200);
  t.false(c.log.view().state.transfers.get('proj')!.frozen, 'lifted after its budget');
  t.like(c.members['east-1'].engine.status('proj'), { frozen: false, barrier: 3 }, 'the final serial is the next barrier');
  await c.members['east-1'].fence.write('proj', 1, 'accepted again'); // serial 4
  c.holds('north', eastOrigin(c), 3);
  await c.clock.advanceAsync(500);
  t.true(c.log.view().state.transfers.get('proj')!.frozen, 'frozen again, with the final serial 4');
  c.holds('north', eastOrigin(c), 4);
  await c.clock.advanceAsync(500);
  t.like(await run, { ok: true, value: { barrier: 4, epoch: 2 } });
});

test('the same key waiting at another member answers 504 when the transfer times out or its registration expires, never 409', async (t) => {
  // The driver times out at its budget and releases the registration (timed_out).
  const c = await withProj({ engine: { budgetMs: 10_000, expiryGraceMs: 1_000 } });
  await writes(c, 1);
  const driven = settle(c.members['east-1'].engine.start(toNorth()));
  await c.clock.advanceAsync(10);
  const waiting = settle(c.members['west-1'].engine.start(toNorth()));
  await c.clock.advanceAsync(12_000);
  const [a, b] = [await driven, await waiting];
  t.true(!a.ok && a.error instanceof CatchUpTimeoutError, `driver: ${JSON.stringify(a)}`);
  t.true(!b.ok && b.error instanceof CatchUpTimeoutError && b.error.status === 504, `the other member: ${JSON.stringify(b)}`);

  // The driver is gone: the others expire the registration past its deadline and grace.
  const d = await withProj({ engine: { budgetMs: 10_000, expiryGraceMs: 1_000 } });
  await writes(d, 1);
  void settle(d.members['east-1'].engine.start(toNorth({ id: 'k2' })));
  await d.clock.advanceAsync(10);
  d.members['east-1'].engine.stop();
  await flushMicrotasks();
  const orphaned = settle(d.members['north-1'].engine.start(toNorth({ id: 'k2' })));
  await d.clock.advanceAsync(15_000);
  const o = await orphaned;
  t.true(!o.ok && o.error instanceof CatchUpTimeoutError && o.error.status === 504, `waiting on an expired registration: ${JSON.stringify(o)}`);
  t.regex((o as { error: Error }).error.message, /did not commit within its budget/);
  t.is(d.moves(), 0);
});

test('a POST behind a release this member cannot get applied (no leader) answers 503 within a probe timeout, not after the release', async (t) => {
  const c = await withProj();
  await writes(c, 1);
  // The registration applies but its answer is lost: the run releases it in the background,
  // and that release waits in consensus (held, as with no leader in reach).
  c.log.failNext(new OutcomeUnknownError('leadership_lost', 'answer lost'), { afterApply: true });
  c.log.hold();
  const lost = await settle(c.members['east-1'].engine.start(toNorth({ id: 'k1' })));
  t.like(lost, { ok: false, error: { code: 'transfer_outcome_unknown' } });
  const next = settle(c.members['east-1'].engine.start(toNorth({ id: 'k2' })));
  await c.clock.advanceAsync(10_100);
  const answer = await next;
  t.true(!answer.ok && answer.error instanceof OwnershipUnavailableError && answer.error.status === 503, JSON.stringify(answer));
  t.regex((answer as { error: Error }).error.message, /still being released.*retry with Idempotency-Key k2/);
  c.log.release();
  await c.clock.advanceAsync(5_000);
  t.false(c.log.view().state.transfers.has('proj'), 'the release applied once consensus answered');
});

test('a registration whose driver is gone is released by another member once past its deadline', async (t) => {
  const c = await withProj({ engine: { budgetMs: 10_000, expiryGraceMs: 1_000 } });
  await writes(c, 1);
  void settle(c.members['east-1'].engine.start(toNorth()));
  await c.clock.advanceAsync(10);
  c.members['east-1'].engine.stop();
  await flushMicrotasks();
  t.true(c.log.view().state.transfers.has('proj'));
  await c.clock.advanceAsync(12_000);
  t.false(c.log.view().state.transfers.has('proj'), 'released');
  t.is(c.moves(), 0);
});

test('a repeated cancel after a newer move committed at another member answers 409 naming that move, not 204 from the window', async (t) => {
  const c = await withProj();
  await writes(c, 1); // north holds none of it: the transfer waits
  const waiting = settle(c.members['east-1'].engine.start(toNorth({ id: 'called-off' })));
  await c.clock.advanceAsync(50);
  await c.members['west-1'].engine.cancel('proj');
  t.like(await waiting, { ok: false, error: { code: 'transfer_cancelled' } });
  c.holds('north', eastOrigin(c), 1);
  t.like(await settled(c, c.members['north-1'].engine.start(toNorth({ id: 'later-move' }))), { ok: true, value: { epoch: 2 } });
  const cancel = await settle(c.members['west-1'].engine.cancel('proj'));
  t.true(!cancel.ok && cancel.error instanceof TransferCommittedError, 'the move that committed since stands');
  t.like(cancel, { error: { id: 'later-move' } });
});

test('a cancel at a member whose own request is not registered yet calls off the transfer another member registered', async (t) => {
  const c = await withProj();
  await writes(c, 2);
  const running = settle(c.members['east-1'].engine.start(toNorth({ id: 'registered' })));
  await c.clock.advanceAsync(50);
  t.like(c.log.view().state.transfers.get('proj'), { id: 'registered' });
  // west-1 takes a second request; before it is refused, the operator cancels there.
  const second = settle(c.members['west-1'].engine.start(toNorth({ id: 'second' })));
  await c.members['west-1'].engine.cancel('proj');
  t.like(await second, { ok: false });
  await c.clock.advanceAsync(50);
  t.like(await running, { ok: false, error: { code: 'transfer_cancelled' } }, 'the registered transfer was called off');
  c.holds('north', eastOrigin(c), 2);
  await c.clock.advanceAsync(5_000);
  t.is(c.moves(), 0, 'the 204 stands: nothing moved');
});

test('a key reissued after its cancel is cancelled again by a repeated cancel: the window never hides a registered transfer', async (t) => {
  const c = await withProj();
  await writes(c, 1); // north holds none of it: the transfer waits
  const first = settle(c.members['east-1'].engine.start(toNorth({ id: 'reissued' })));
  await c.clock.advanceAsync(50);
  await c.members['west-1'].engine.cancel('proj');
  t.like(await first, { ok: false, error: { code: 'transfer_cancelled' } });
  const again = settle(c.members['east-1'].engine.start(toNorth({ id: 'reissued' })));
  await c.clock.advanceAsync(50);
  t.like(c.log.view().state.transfers.get('proj'), { id: 'reissued' }, 'registered anew under the same key');
  await c.members['west-1'].engine.cancel('proj');
  t.like(await again, { ok: false, error: { code: 'transfer_cancelled' } });
  c.holds('north', eastOrigin(c), 1);
  await c.clock.advanceAsync(5_000);
  t.is(c.moves(), 0);
});

test('a cancel at a member that took the same key after another member registered it calls that transfer off: the 204 stands', async (t) => {
  const c = await withProj();
  await writes(c, 2);
  const running = settle(c.members['east-1'].engine.start(toNorth({ id: 'sent-twice' })));
  await c.clock.advanceAsync(50);
  t.like(c.log.view().state.transfers.get('proj'), { id: 'sent-twice', driver: 'east-1' });
  // The client got no answer in time and sent the same key to west-1; before west-1 joined the
  // registration, the operator cancels there.
  const retried = settle(c.members['west-1'].engine.start(toNorth({ id: 'sent-twice' })));
  await c.members['west-1'].engine.cancel('proj');
  c.holds('north', eastOrigin(c), 2);
  await c.clock.advanceAsync(5_000);
  t.is(c.moves(), 0, 'the 204 stands: nothing moved');
  t.is(c.log.view().state.transfers.get('proj'), undefined, 'nothing left registered');
  t.like(await running, { ok: false, error: { code: 'transfer_cancelled' } }, 'the driver run was called off');
  t.like(await retried, { ok: false });
});
