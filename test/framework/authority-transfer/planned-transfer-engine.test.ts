import test from 'ava';
import {
  OwnershipUnavailableError,
  AuditProjectionError,
  CatchUpTimeoutError,
  CommitRefusedError,
  IdempotencyKeyMismatchError,
  InvalidTransferRequestError,
  MoveRefusedError,
  TransferCancelledError,
  TransferCommittedError,
  TransferCommittingError,
  TransferInProgressError,
  TransferNotFoundError,
  TransferOutcomeUnknownError,
} from '@baton/authority-transfer/internal/transfer-errors.js';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { NotAppendedError, OutcomeUnknownError, ReadUnavailableError } from '@baton/contracts/internal/metadata-consensus.js';
import { TransferDriver as PlannedTransferEngine } from '@baton/authority-transfer/internal/transfer-driver.js';
import type { OwnershipState } from '@baton/authority-transfer/internal/ownership.js';
import { restoreOwnership, snapshotOwnership } from '@baton/authority-transfer/internal/ownership-index.js';
import { flushMicrotasks } from '@baton/conformance/internal/virtual-clock.js';
import { atNextCommit, engineHarness, establish, request, settle } from './harness.js';

async function ready() {
  const h = await engineHarness();
  await establish(h.consensus, 'proj', 'east');
  for (let i = 0; i < 5; i++) await h.feed.append({ authority: 'proj', operation: `op${i}`, epoch: 1 });
  return h;
}

function moves(h: Awaited<ReturnType<typeof ready>>) {
  return h.consensus.log().filter((e) => e.command.type === 'commit_planned_transfer' && e.result.ok).length;
}

test('a transfer commits once the target applied through the barrier and answers with the sealed record', async (t) => {
  const h = await ready();
  h.probe.answer('west', 5);
  const record = await h.engine.start(request());
  t.like(record, { id: '5f0c-drain-proj', authority: 'proj', source: 'east', target: 'west', actor: 'olivia', reason: 'drain east', barrier: 5, epoch: 2 });
  t.is(record.commit_term, 1);
  t.is(record.commit_index, h.consensus.view().applied.index - 1, 'the ack follows the commit');
  t.deepEqual(await h.audit.byId('5f0c-drain-proj'), record);
  t.like(h.consensus.view().state.authorities.get('proj')!, { home: 'west', epoch: 2 });
  t.is(h.consensus.view().state.pending.size, 0, 'the only voter stored it, so it was released');
  t.is(h.engine.registry.size, 0, 'a resolved plan leaves the registry');
});

test('the barrier is the source member serial at start, not anything the caller sends', async (t) => {
  const h = await ready();
  h.probe.answer('west', 4);
  const run = settle(h.engine.start(request()));
  await h.probe.whenProbed(1);
  t.is(h.engine.status('proj')!.barrier, 5);
  t.is(h.engine.status('proj')!.state, 'AwaitingCatchUp');
  h.probe.answer('west', 5);
  await h.clock.advanceAsync(10_000);
  t.like(await run, { ok: true, value: { barrier: 5 } });
});

test('the probe reads the target for this member feed with a ten-second timeout', async (t) => {
  const h = await ready();
  h.probe.answer('west', 9);
  await h.engine.start(request());
  t.deepEqual(h.probe.calls[0], { target: 'west', origin: { member: 'east-1', incarnation: 'east-1-inc' }, timeoutMs: 10_000 });
});

test('an unreachable target never advances the plan and times out with 504 after the budget; nothing moves', async (t) => {
  const h = await ready();
  h.probe.unreachable('west');
  const run = settle(h.engine.start(request()));
  await h.clock.advanceAsync(5 * 60_000 - 1);
  t.is(h.engine.status('proj')!.state, 'AwaitingCatchUp');
  await h.clock.advanceAsync(1);
  const outcome = await run;
  t.false(outcome.ok);
  const error = (outcome as { error: unknown }).error;
  t.true(error instanceof CatchUpTimeoutError);
  t.is((error as CatchUpTimeoutError).status, 504);
  t.is(await h.audit.byId('5f0c-drain-proj'), undefined, 'no audit');
  t.deepEqual(h.consensus.view().state.authorities.get('proj')!, { home: 'east', epoch: 1 });
  t.is(h.engine.registry.size, 0);
});

test('a target absent from the roster reads as no frontier and times out', async (t) => {
  const h = await ready();
  const run = settle(h.engine.start(request({ target: 'nowhere' })));
  await h.clock.advanceAsync(5 * 60_000);
  const outcome = await run;
  t.true(!outcome.ok && outcome.error instanceof CatchUpTimeoutError);
  t.true(h.probe.calls.length > 1, 're-probed on a schedule');
});

test('the re-probe schedule is bounded: a probe never waits past the budget', async (t) => {
  const h = await engineHarness({ engine: { budgetMs: 15_000 } });
  await establish(h.consensus, 'proj', 'east');
  await h.feed.append({ authority: 'proj', operation: 'op', epoch: 1 });
  h.probe.hang('west');
  const run = settle(h.engine.start(request()));
  await h.clock.advanceAsync(15_000);
  const outcome = await run;
  t.true(!outcome.ok && outcome.error instanceof CatchUpTimeoutError);
  t.deepEqual(
    h.probe.calls.map((c) => c.timeoutMs),
    [10_000, 5_000 - 100],
    'the second probe is cut to what remains of the budget',
  );
});

test('the budget is configurable', async (t) => {
  const h = await engineHarness({ engine: { budgetMs: 1_000 } });
  await establish(h.consensus, 'proj', 'east');
  const run = settle(h.engine.start(request()));
  await h.clock.advanceAsync(1_000);
  t.true(((await run) as { error: unknown }).error instanceof CatchUpTimeoutError);
});

test('a cancel while the probe is blocked answers at once and the run resolves as 409', async (t) => {
  const h = await ready();
  h.probe.hang('west');
  const run = settle(h.engine.start(request()));
  await h.probe.whenProbed(1);
  const started = h.clock.now();
  await h.engine.cancel('proj');
  const outcome = await run;
  t.is(h.clock.now(), started, 'no virtual time passed: nothing waited on the probe');
  t.true(!outcome.ok && outcome.error instanceof TransferCancelledError);
  t.is(((outcome as { error: TransferCancelledError }).error).status, 409);
  t.deepEqual(h.consensus.view().state.authorities.get('proj')!, { home: 'east', epoch: 1 });
  t.is(moves(h), 0);
});

test('a cancel between probes ends the wait and nothing reaches consensus even if the target then catches up', async (t) => {
  const h = await ready();
  h.probe.answer('west', 1);
  const run = settle(h.engine.start(request()));
  await h.probe.whenProbed(1);
  await flushMicrotasks();
  h.probe.answer('west', 5);
  await h.engine.cancel('proj');
  const outcome = await run;
  t.true(!outcome.ok && outcome.error instanceof TransferCancelledError);
  await h.clock.advanceAsync(60_000);
  t.is(h.probe.calls.length, 1, 'no probe after the cancel');
  t.is(moves(h), 0);
  t.is(await h.audit.byId('5f0c-drain-proj'), undefined);
});

test('a cancel from the claim onward is refused with 409 at once, even while consensus is blocked', async (t) => {
  const h = await ready();
  h.probe.answer('west', 5);
  atNextCommit(h.consensus, () => h.consensus.hold());
  const run = settle(h.engine.start(request()));
  await h.consensus.whenHeld(1);
  const cancel = await settle(h.engine.cancel('proj'));
  t.true(!cancel.ok && cancel.error instanceof TransferCommittingError);
  t.is(h.engine.status('proj')!.state, 'Committing');
  h.consensus.release();
  t.like(await run, { ok: true, value: { epoch: 2 } });
});

test('a cancel of a committed transfer answers 409 from the durable audit, also after a restart', async (t) => {
  const h = await ready();
  h.probe.answer('west', 5);
  await h.engine.start(request());
  const first = await settle(h.engine.cancel('proj'));
  t.true(!first.ok && first.error instanceof TransferCommittedError);
  h.engine.stop();
  const restarted = engineHarnessOver(h);
  const again = await settle(restarted.cancel('proj'));
  t.true(!again.ok && again.error instanceof TransferCommittedError);
});

test('a run cut short by its member shutting down answers 503, not "cancelled": the registration stays for a retry under the key', async (t) => {
  const h = await ready();
  const run = settle(h.engine.start(request())); // west has applied nothing: it waits
  await h.clock.advanceAsync(100);
  h.engine.stop();
  const outcome = await run;
  t.true(!outcome.ok && outcome.error instanceof OwnershipUnavailableError, String(!outcome.ok && outcome.error));
  t.like(h.consensus.view().state.transfers.get('proj'), { id: '5f0c-drain-proj' }, 'still registered');
});

test('a cancel for an authority with no transfer answers 404', async (t) => {
  const h = await ready();
  const outcome = await settle(h.engine.cancel('other'));
  t.true(!outcome.ok && outcome.error instanceof TransferNotFoundError);
  t.is((outcome as { error: TransferNotFoundError }).error.status, 404);
});

test('a repeated cancel stays idempotent (204) for abandoned or timed-out transfers', async (t) => {
  const h = await ready();
  h.probe.unreachable('west');
  const run = settle(h.engine.start(request()));
  await h.engine.cancel('proj');
  await run;
  await t.notThrowsAsync(h.engine.cancel('proj'));
  const timedOut = settle(h.engine.start(request({ id: 'k2' })));
  await h.clock.advanceAsync(5 * 60_000);
  await timedOut;
  await t.notThrowsAsync(h.engine.cancel('proj'));
});

test('the 256 most recently abandoned authorities are remembered; older ones answer 404', async (t) => {
  const h = await ready();
  h.probe.unreachable('west');
  for (let i = 0; i <= 256; i++) {
    const authority = `a${i}`;
    await establish(h.consensus, authority, 'east');
    const run = settle(h.engine.start(request({ id: `k${i}`, authority })));
    await h.engine.cancel(authority);
    await run;
  }
  t.is(h.engine.registry.abandoned.size, 256);
  const aged = await settle(h.engine.cancel('a0'));
  t.true(!aged.ok && aged.error instanceof TransferNotFoundError);
  await t.notThrowsAsync(h.engine.cancel('a1'));
  await t.notThrowsAsync(h.engine.cancel('a256'));
});

test('a second transfer for an authority with one running answers 409', async (t) => {
  const h = await ready();
  h.probe.unreachable('west');
  const run = settle(h.engine.start(request()));
  const second = await settle(h.engine.start(request({ id: 'other-key', target: 'north' })));
  t.true(!second.ok && second.error instanceof TransferInProgressError);
  await h.engine.cancel('proj');
  await run;
});

test('duplicate requests under one key share one run and one move', async (t) => {
  const h = await ready();
  h.probe.answer('west', 1);
  const a = h.engine.start(request());
  const b = h.engine.start(request());
  h.probe.answer('west', 5);
  await h.clock.advanceAsync(10_000);
  const [ra, rb] = await Promise.all([a, b]);
  t.deepEqual(ra, rb);
  t.is(moves(h), 1);
});

test('the same key with a different body answers 422, while running and after commit', async (t) => {
  const h = await ready();
  h.probe.unreachable('west');
  const run = settle(h.engine.start(request()));
  const running = await settle(h.engine.start(request({ reason: 'something else' })));
  t.true(!running.ok && running.error instanceof IdempotencyKeyMismatchError);
  t.is((running as { error: IdempotencyKeyMismatchError }).error.status, 422);
  h.probe.answer('west', 5);
  await h.clock.advanceAsync(10_000);
  t.true((await run).ok);
  const after = await settle(h.engine.start(request({ target: 'north' })));
  t.true(!after.ok && after.error instanceof IdempotencyKeyMismatchError);
});

test('a retry with the same key after commit answers the original record and moves nothing', async (t) => {
  const h = await ready();
  h.probe.answer('west', 5);
  const first = await h.engine.start(request());
  await h.feed.append({ authority: 'proj', operation: 'later', epoch: 2 });
  const again = await h.engine.start(request());
  t.deepEqual(again, first);
  t.is(moves(h), 1);
});

for (const reason of ['key_reused', 'queue_saturated'] as const) {
  test(`a ${reason} refusal returns the transfer to Ready, still cancellable under the same identity`, async (t) => {
    const h = await ready();
    h.probe.answer('west', 5);
    atNextCommit(h.consensus, () => h.consensus.failNext(new NotAppendedError(reason, 'injected')));
    const outcome = await settle(h.engine.start(request()));
    t.true(!outcome.ok && outcome.error instanceof CommitRefusedError);
    t.is((outcome as { error: CommitRefusedError }).error.status, reason === 'key_reused' ? 422 : 503);
    t.is(h.engine.status('proj')!.state, 'Ready');
    await h.engine.cancel('proj');
    t.is(h.engine.status('proj'), undefined);
    t.is(moves(h), 0);
  });
}

test('after a refusal the same key resumes the Ready transfer and commits once', async (t) => {
  const h = await ready();
  h.probe.answer('west', 5);
  atNextCommit(h.consensus, () => h.consensus.failNext(new NotAppendedError('queue_saturated', 'injected')));
  await settle(h.engine.start(request()));
  const record = await h.engine.start(request());
  t.is(record.epoch, 2);
  t.is(moves(h), 1);
});

test('a transfer left Ready after a refusal is abandoned when its budget runs out', async (t) => {
  const h = await ready();
  h.probe.answer('west', 5);
  atNextCommit(h.consensus, () => h.consensus.failNext(new NotAppendedError('queue_saturated', 'injected')));
  await settle(h.engine.start(request()));
  await h.clock.advanceAsync(5 * 60_000);
  t.is(h.engine.status('proj'), undefined);
  await t.notThrowsAsync(h.engine.cancel('proj'), 'it is remembered as abandoned');
});

test('an outcome-unknown failure leaves the transfer claimed; the same key resolves it', async (t) => {
  const h = await ready();
  h.probe.answer('west', 5);
  atNextCommit(h.consensus, () => h.consensus.failNext(new OutcomeUnknownError('leadership_lost', 'injected'), { afterApply: true }));
  const outcome = await settle(h.engine.start(request()));
  t.true(!outcome.ok && outcome.error instanceof TransferOutcomeUnknownError);
  t.like(h.engine.status('proj'), { state: 'Committing', outcome_unknown: true });
  const blocked = await settle(h.engine.start(request({ id: 'another' })));
  t.true(!blocked.ok && blocked.error instanceof TransferInProgressError, 'it still holds the authority');
  const record = await h.engine.start(request());
  t.is(record.epoch, 2);
  t.is(moves(h), 1);
  t.is(h.engine.registry.size, 0);
});

test('a cancel of a claimed transfer left without outcome answers 409 when it did commit', async (t) => {
  const h = await ready();
  h.probe.answer('west', 5);
  atNextCommit(h.consensus, () => h.consensus.failNext(new OutcomeUnknownError('timeout', 'injected'), { afterApply: true }));
  await settle(h.engine.start(request()));
  const outcome = await settle(h.engine.cancel('proj'));
  t.true(!outcome.ok && outcome.error instanceof TransferCommittedError);
});

test('a cancel of a claimed transfer left without outcome answers 404 when it did not commit', async (t) => {
  const h = await ready();
  h.probe.answer('west', 5);
  atNextCommit(h.consensus, () => h.consensus.failNext(new OutcomeUnknownError('timeout', 'injected')));
  await settle(h.engine.start(request()));
  const outcome = await settle(h.engine.cancel('proj'));
  t.true(!outcome.ok && outcome.error instanceof TransferNotFoundError);
  const record = await h.engine.start(request());
  t.is(record.epoch, 2, 'the same key still resolves it');
});

test('a cancel answers 503 when the metadata store cannot be read, rather than guess', async (t) => {
  const h = await ready();
  h.audit.failWith(new StoreUnavailableError('audit', 'disk gone'));
  const storeDown = await settle(h.engine.cancel('proj'));
  t.true(!storeDown.ok && storeDown.error instanceof StoreUnavailableError);
  h.audit.failWith(undefined);
  h.consensus.setLeadership({ isLeader: false });
  const noLeader = await settle(h.engine.cancel('proj'));
  t.true(!noLeader.ok && noLeader.error instanceof ReadUnavailableError);
});

test('a failed audit store write answers 503 naming the transfer; the record stays pending; a retry answers the original', async (t) => {
  const h = await ready();
  const outcome = await settle(commitWhileStoreFails(h));
  t.true(!outcome.ok && outcome.error instanceof AuditProjectionError);
  const error = (outcome as { error: AuditProjectionError }).error;
  t.is(error.status, 503);
  t.regex(error.message, /5f0c-drain-proj/);
  const pending = h.consensus.view().state.pending.get('5f0c-drain-proj')!;
  t.deepEqual(pending.awaiting, ['east-1']);
  h.audit.failWith(undefined);
  await h.feed.append({ authority: 'proj', operation: 'later', epoch: 2 });
  const record = await h.engine.start(request());
  t.deepEqual(record, pending.record, 'original epoch and term/index');
  t.is(moves(h), 1);
  t.deepEqual(await h.audit.byId('5f0c-drain-proj'), record);
  t.is(h.consensus.view().state.pending.size, 0, 'acknowledged after the store write');
});

test('a member becoming leader projects its pending records', async (t) => {
  const h = await ready();
  await settle(commitWhileStoreFails(h));
  h.audit.failWith(undefined);
  h.consensus.setLeadership({ isLeader: false });
  h.consensus.setLeadership({ isLeader: true });
  await flushMicrotasks();
  t.truthy(await h.audit.byId('5f0c-drain-proj'));
  t.is(h.consensus.view().state.pending.size, 0);
});

test('a source that is not the home or an authority without home is refused with 409', async (t) => {
  const h = await ready();
  const wrong = await settle(h.engine.start(request({ source: 'north', target: 'west' })));
  t.true(!wrong.ok && wrong.error instanceof MoveRefusedError && wrong.error.status === 409);
  const unknown = await settle(h.engine.start(request({ authority: 'ghost', id: 'g' })));
  t.true(!unknown.ok && unknown.error instanceof MoveRefusedError);
});

test('a transfer to its own source datacenter is a 400', async (t) => {
  const h = await ready();
  const outcome = await settle(h.engine.start(request({ target: 'east' })));
  t.true(!outcome.ok && outcome.error instanceof InvalidTransferRequestError && outcome.error.status === 400);
});

test("a key spelt as a raw move's record id (<commit_index>-<seq>) is a 400: the audit stores keep one record per id", async (t) => {
  const h = await ready();
  const outcome = await settle(h.engine.start(request({ id: '12-0' })));
  t.true(!outcome.ok && outcome.error instanceof InvalidTransferRequestError && outcome.error.status === 400);
  t.regex((outcome as { error: Error }).error.message, /12-0 is spelt as a raw move's audit record id/);
  t.is(h.consensus.view().state.transfers.size, 0, 'nothing registered');
  h.probe.answer('west', 5);
  t.like(await h.engine.start(request({ id: '12-0-drain' })), { id: '12-0-drain', epoch: 2 }, 'a key that only starts so is a key like any other');
});

test('status shows the state, barrier, latest frontier reading and age of a transfer in flight', async (t) => {
  const h = await ready();
  h.probe.answer('west', 3);
  const run = settle(h.engine.start(request()));
  await h.probe.whenProbed(1);
  await h.clock.advanceAsync(1_000);
  t.like(h.engine.status('proj'), { id: '5f0c-drain-proj', state: 'AwaitingCatchUp', barrier: 5, frontier: 3, age_ms: 1_000 });
  await h.engine.cancel('proj');
  await run;
  t.is(h.engine.status('proj'), undefined);
});

function engineHarnessOver(h: Awaited<ReturnType<typeof ready>>) {
  // A restarted node: a fresh engine and registry over the same consensus state and audit store.
  return new (h.engine.constructor as typeof import('@baton/authority-transfer/internal/transfer-driver.js').TransferDriver)(
    { consensus: h.consensus, audit: h.audit, projection: h.projection, probe: h.probe, feed: h.feed, clock: h.clock, log: h.log },
  );
}

/** Starts a transfer, then takes the audit store down before the commit: the store write fails after the move. */
async function commitWhileStoreFails(h: Awaited<ReturnType<typeof ready>>) {
  h.probe.answer('west', 1);
  const run = h.engine.start(request());
  await h.probe.whenProbed(1);
  h.audit.failWith(new StoreUnavailableError('audit', 'disk full'));
  h.probe.answer('west', 5);
  await h.clock.advanceAsync(10_000);
  return run;
}

test('a commit left without outcome after it did apply is resolved in the background: the plan completes, nothing moves twice', async (t) => {
  const h = await ready();
  h.probe.answer('west', 5);
  atNextCommit(h.consensus, () => h.consensus.failNext(new OutcomeUnknownError('leadership_lost', 'injected'), { afterApply: true }));
  const outcome = await settle(h.engine.start(request()));
  t.true(!outcome.ok && outcome.error instanceof TransferOutcomeUnknownError);
  t.is(h.engine.unresolvedCount, 1, 'a resolution is scheduled');
  await h.clock.advanceAsync(500);
  t.is(h.engine.registry.size, 0, 'the authority is free again without any retry');
  t.is(h.engine.unresolvedCount, 0);
  t.is(moves(h), 1);
  t.like(await h.audit.byId('5f0c-drain-proj'), { epoch: 2 });
  const again = await h.engine.start(request());
  t.like(again, { epoch: 2 }, 'a later retry under the key answers the same decision');
  t.is(moves(h), 1);
});

test('a commit left without outcome that never appended is resolved by committing the same key once', async (t) => {
  const h = await ready();
  h.probe.answer('west', 5);
  atNextCommit(h.consensus, () => h.consensus.failNext(new OutcomeUnknownError('timeout', 'injected')));
  await settle(h.engine.start(request()));
  t.is(moves(h), 0);
  await h.clock.advanceAsync(500);
  t.is(moves(h), 1, 'the move the operator could no longer cancel is committed by the resolution');
  t.is(h.engine.registry.size, 0);
  t.like(h.consensus.view().state.authorities.get('proj')!, { home: 'west', epoch: 2 });
});

test('resolution attempts keep the plan claimed while consensus refuses them; a cancel meanwhile releases it and nothing moves', async (t) => {
  const h = await ready();
  h.probe.answer('west', 5);
  atNextCommit(h.consensus, () => h.consensus.failNext(new OutcomeUnknownError('timeout', 'injected')));
  await settle(h.engine.start(request()));
  // The next attempt is refused before the log: that proves nothing about the first one.
  atNextCommit(h.consensus, () => h.consensus.failNext(new NotAppendedError('no_leader', 'injected')));
  await h.clock.advanceAsync(500);
  t.like(h.engine.status('proj'), { state: 'Committing', outcome_unknown: true }, 'still claimed, not Ready');
  const cancel = await settle(h.engine.cancel('proj'));
  t.true(!cancel.ok && cancel.error instanceof TransferNotFoundError, 'not committed: the release landed first in the log');
  t.false(h.consensus.view().state.transfers.has('proj'), 'the registration is released, so no attempt can commit it');
  t.is(h.engine.registry.size, 0);
  await h.clock.advanceAsync(60_000);
  t.is(moves(h), 0, 'no resolution commits a transfer answered 404');
  t.is(h.engine.unresolvedCount, 0);
});

test('a plan resolved by a retry under the key needs no background attempt', async (t) => {
  const h = await ready();
  h.probe.answer('west', 5);
  atNextCommit(h.consensus, () => h.consensus.failNext(new OutcomeUnknownError('timeout', 'injected')));
  await settle(h.engine.start(request()));
  const record = await h.engine.start(request());
  t.is(record.epoch, 2);
  t.is(h.engine.unresolvedCount, 0, 'the scheduled attempt was dropped');
  await h.clock.advanceAsync(60_000);
  t.is(moves(h), 1);
});

test('stopping the engine drops pending resolutions', async (t) => {
  const h = await ready();
  h.probe.answer('west', 5);
  atNextCommit(h.consensus, () => h.consensus.failNext(new OutcomeUnknownError('timeout', 'injected')));
  await settle(h.engine.start(request()));
  h.engine.stop();
  await h.clock.advanceAsync(60_000);
  t.is(moves(h), 0);
  t.is(h.engine.unresolvedCount, 0);
});

/**
 * The harness's consensus, counting linearizable reads, with a view that can be made stale
 * until the next linearizable read (which a member answers only once it applied that far).
 */
/** A copy of a view that later commands do not change (the state through its own snapshot). */
function frozenView<V extends { state: OwnershipState }>(view: V): V {
  return { ...view, state: restoreOwnership(snapshotOwnership(view.state)) };
}

function countingConsensus(h: Awaited<ReturnType<typeof ready>>) {
  let reads = 0;
  let staleView: ReturnType<typeof h.consensus.view> | undefined;
  const consensus = Object.create(h.consensus) as typeof h.consensus;
  // Every call runs on the one log itself, so what it applies (and its applied index) is the
  // one this wrapper's view shows, never a copy of the index shadowing it.
  consensus.propose = h.consensus.propose.bind(h.consensus);
  consensus.watch = h.consensus.watch.bind(h.consensus);
  consensus.read = async () => {
    reads++;
    staleView = undefined;
    return h.consensus.read();
  };
  consensus.view = () => staleView ?? h.consensus.view();
  const engine = new PlannedTransferEngine({ ...h, consensus });
  return { engine, reads: () => reads, freezeView: () => (staleView = frozenView(h.consensus.view())) };
}

test('admission reads the applied view: a transfer from the home costs no linearizable read', async (t) => {
  const h = await ready();
  const c = countingConsensus(h);
  h.probe.answer('west', 5);
  const record = await c.engine.start(request());
  t.is(record.epoch, 2);
  t.is(c.reads(), 0);
});

test('a view that would refuse the move is confirmed by a linearizable read first', async (t) => {
  const h = await ready();
  const c = countingConsensus(h);
  await establish(h.consensus, 'lib', 'west');
  c.freezeView(); // lib lives in west as far as this lagging view knows
  await h.consensus.propose({ type: 'transfer_authority', authority: 'lib', target: 'east', expectedSource: 'west' });
  h.probe.answer('west', 5);
  const record = await c.engine.start(request({ id: 'lib-move', authority: 'lib' }));
  t.like(record, { authority: 'lib', epoch: 3 }, 'the cluster says lib lives in east: the move goes ahead');
  t.is(c.reads(), 1);
});

test('a retry admitted on a view that has not seen its commit answers the original decision, not a refusal', async (t) => {
  const h = await ready();
  const c = countingConsensus(h);
  c.freezeView(); // before the move: proj still lives in east here
  h.probe.answer('west', 5);
  const original = await h.engine.start(request());
  const retry = await c.engine.start(request());
  t.deepEqual(retry, original);
  t.is(moves(h), 1);
});

test('the leader starts abandoned-key tracking with one entry when its state was restored from before it, and only once', async (t) => {
  const h = await engineHarness();
  // As a state restored from a snapshot taken before keys were tracked reads.
  h.consensus.view().state.abandonedTracked = false;
  await h.clock.advanceAsync(2_500);
  t.true(h.consensus.view().state.abandonedTracked);
  t.is(h.consensus.log().filter((e) => e.command.type === 'track_abandoned_keys').length, 1);
  await h.clock.advanceAsync(5_000);
  t.is(h.consensus.log().filter((e) => e.command.type === 'track_abandoned_keys').length, 1, 'tracked: no further entry');
  h.engine.stop();
});

