import test from 'ava';
import { NotAppendedError, OutcomeUnknownError } from '@baton/contracts/internal/metadata-consensus.js';
import { OwnershipUnavailableError, TransferOutcomeUnknownError } from '@baton/authority-transfer/internal/transfer-errors.js';
import type { OwnershipCommand } from '@baton/authority-transfer/internal/ownership.js';
import { engineHarness, establish, request, settle, type OwnershipLocalConsensus } from './harness.js';

// A freeze or thaw that consensus does not take (or whose outcome is unknown) leaves the plan
// unclaimed where its readings put it: a plan whose target is short of the final serials stays
// AwaitingCatchUp, so the run resumed under its key probes before it freezes the source's writes
// again; and the answer never says the move may have committed, as no commit was proposed.

/** Refuses the next command of `type` before the log, as a saturated queue or a lost leader does. */
function refuseNext(consensus: OwnershipLocalConsensus, type: OwnershipCommand['type']): void {
  const propose = consensus.propose.bind(consensus);
  let armed = true;
  consensus.propose = (command, options) => {
    if (armed && command.type === type) {
      armed = false;
      return Promise.reject(new NotAppendedError('no_leader', 'injected'));
    }
    return propose(command, options);
  };
}

function freezes(consensus: OwnershipLocalConsensus): number {
  return consensus.log().filter((e) => e.command.type === 'freeze_transfer' && e.result.ok).length;
}

test('a thaw refused by consensus leaves a plan short of the finals AwaitingCatchUp: the resumed run freezes again only once the target reached them', async (t) => {
  const h = await engineHarness();
  await establish(h.consensus, 'proj', 'east');
  for (let i = 0; i < 5; i++) await h.feed.append({ authority: 'proj', operation: `op${i}`, epoch: 1 });
  // The barrier is 5; three writes land before the freeze, so the final serial is 8.
  h.probe.answer('west', 4);
  const first = settle(h.engine.start(request()));
  await h.probe.whenProbed(1);
  for (let i = 5; i < 8; i++) await h.feed.append({ authority: 'proj', operation: `op${i}`, epoch: 1 });
  h.probe.answer('west', 5);
  refuseNext(h.consensus, 'thaw_transfer');
  // The target never reaches the final serial within the freeze budget: the thaw is refused.
  await h.clock.advanceAsync(10_000);
  const outcome = await first;
  t.true(!outcome.ok && outcome.error instanceof OwnershipUnavailableError, JSON.stringify(outcome));
  t.is(freezes(h.consensus), 1);
  t.like(h.engine.status('proj'), { state: 'AwaitingCatchUp', barrier: 8, frontier: 5 }, 'short of the finals: not Ready');

  // Resumed under its key with the target still at 5: it probes, it does not freeze the writes.
  const resumed = settle(h.engine.start(request()));
  await h.clock.advanceAsync(3_000);
  t.is(freezes(h.consensus), 1, 'no freeze before the target reached the final serials');
  t.false(h.consensus.view().state.transfers.get('proj')!.frozen, 'the writes are not held');
  h.probe.answer('west', 8);
  await h.clock.advanceAsync(10_000);
  const committed = await resumed;
  t.true(committed.ok, JSON.stringify(committed));
  t.like((committed as { value: unknown }).value, { barrier: 8, epoch: 2 });
  t.is(freezes(h.consensus), 2);
});

/** The next command of `type` ends without a known outcome (applied first when `afterApply`). */
function lostAnswerAt(consensus: OwnershipLocalConsensus, type: OwnershipCommand['type'], afterApply: boolean): void {
  const propose = consensus.propose.bind(consensus);
  let armed = true;
  consensus.propose = (command, options) => {
    if (armed && command.type === type) {
      armed = false;
      consensus.failNext(new OutcomeUnknownError('timeout', 'injected'), { afterApply });
    }
    return propose(command, options);
  };
}

for (const afterApply of [false, true]) {
  test(`a freeze whose outcome is unknown (${afterApply ? 'it applied' : 'it did not apply'}) answers 503 ownership_unavailable, never "may have committed": the plan is not claimed, and its key commits once`, async (t) => {
    const h = await engineHarness();
    await establish(h.consensus, 'proj', 'east');
    for (let i = 0; i < 5; i++) await h.feed.append({ authority: 'proj', operation: `op${i}`, epoch: 1 });
    h.probe.answer('west', 5);
    lostAnswerAt(h.consensus, 'freeze_transfer', afterApply);
    const outcome = await settle(h.engine.start(request()));
    t.true(!outcome.ok && outcome.error instanceof OwnershipUnavailableError, JSON.stringify(outcome));
    t.false(!outcome.ok && outcome.error instanceof TransferOutcomeUnknownError);
    t.regex((outcome as { error: Error }).error.message, /did not commit/);
    t.not(h.engine.status('proj')!.state, 'Committing', 'not claimed');
    t.is(h.engine.unresolvedCount, 0, 'nothing to resolve in the background');
    // A freeze that applied is lifted behind the answer: writes are not held on a retry.
    await h.clock.advanceAsync(2_000);
    t.false(h.consensus.view().state.transfers.get('proj')!.frozen);
    const record = await h.engine.start(request());
    t.like(record, { epoch: 2 });
    t.is(h.consensus.log().filter((e) => e.command.type === 'commit_planned_transfer' && e.result.ok).length, 1);
  });
}
