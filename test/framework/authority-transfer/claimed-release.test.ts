import test from 'ava';
import { TransferCancelledError, TransferReleasedError } from '@baton/authority-transfer/internal/transfer-errors.js';
import { atNextCommit, engineHarness, establish, request, settle } from './harness.js';

// A claimed commit the state machine refuses because the registration is gone: the run answers
// for what took it away, "cancelled" only when a cancel did (seed 003; README: a run answers
// "cancelled" only when an operator cancelled it).

test('a claimed commit refused because a failover took the registration away answers 409 transfer_released, not "cancelled"', async (t) => {
  const h = await engineHarness();
  await establish(h.consensus, 'proj', 'east');
  for (let i = 0; i < 5; i++) await h.feed.append({ authority: 'proj', operation: `op${i}`, epoch: 1 });
  h.probe.answer('west', 5);
  // A failover moves the home just before the commit lands: it drops the registration.
  atNextCommit(h.consensus, () => void h.consensus.propose({ type: 'transfer_authority', authority: 'proj', target: 'north' }));
  const outcome = await settle(h.engine.start(request()));
  t.true(!outcome.ok && outcome.error instanceof TransferReleasedError, JSON.stringify(outcome));
  t.false(!outcome.ok && outcome.error instanceof TransferCancelledError);
  t.like(h.consensus.view().state.authorities.get('proj'), { home: 'north', epoch: 2 });
});
