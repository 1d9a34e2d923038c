import test from 'ava';
import { OutcomeUnknownError } from '@baton/contracts/internal/metadata-consensus.js';
import { TransferNotFoundError, TransferOutcomeUnknownError } from '@baton/authority-transfer/internal/transfer-errors.js';
import { clusterHarness } from './cluster-harness.js';
import { atNextCommit, request, settle } from './harness.js';

// A claimed transfer whose commit was sent without a known outcome, cancelled. Only its driver
// knows the claim: it answers from the durable audit as the seed says (404: it did not commit);
// another member sees a registered transfer and answers 204 for the release it made. The two
// answers differ in wording only: each is a release_transfer ordered in the log against the
// commit, so neither is ever followed by the move, and the driver stops resolving it.

const toNorth = () => request({ target: 'north', reason: 'drain east' });

async function claimedWithoutOutcome() {
  const c = await clusterHarness();
  await c.log.propose({ type: 'transfer_authority', authority: 'proj', target: 'east' });
  await c.members['east-1'].fence.write('proj', 1, 'op0');
  c.holds('north', c.members['east-1'].feed.origin(), 1);
  atNextCommit(c.log, () => c.log.failNext(new OutcomeUnknownError('timeout', 'injected')));
  const outcome = settle(c.members['east-1'].engine.start(toNorth()));
  for (let i = 0; i < 40; i++) await c.clock.advanceAsync(5);
  return { c, outcome: await outcome };
}

test('a claimed transfer without outcome cancelled at another member: 204, and the driver never commits it', async (t) => {
  const { c, outcome } = await claimedWithoutOutcome();
  t.true(!outcome.ok && outcome.error instanceof TransferOutcomeUnknownError, JSON.stringify(outcome));
  t.like(c.members['east-1'].engine.status('proj'), { state: 'Committing', outcome_unknown: true });
  await t.notThrowsAsync(c.members['west-1'].engine.cancel('proj'), 'released by the cancel: 204');
  await c.clock.advanceAsync(60_000);
  t.is(c.moves(), 0, 'no resolution commits a transfer whose cancel answered 204');
  t.is(c.members['east-1'].engine.registry.size, 0, 'the driver dropped its claimed plan');
  t.is(c.members['east-1'].engine.unresolvedCount, 0);
  t.like(c.log.view().state.authorities.get('proj'), { home: 'east', epoch: 1 });
});

test('the same cancel at the driver answers 404 (not committed, from the audit), and nothing moves either', async (t) => {
  const { c } = await claimedWithoutOutcome();
  const cancel = await settle(c.members['east-1'].engine.cancel('proj'));
  t.true(!cancel.ok && cancel.error instanceof TransferNotFoundError, JSON.stringify(cancel));
  await c.clock.advanceAsync(60_000);
  t.is(c.moves(), 0);
  t.is(c.members['east-1'].engine.registry.size, 0);
  t.false(c.log.view().state.transfers.has('proj'), 'released in the log, as at another member');
});
