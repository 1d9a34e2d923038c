import test from 'ava';
import { FailoverCommands } from '@baton/authority-transfer/internal/failover-command.js';
import { MemberTracker } from '@baton/authority-transfer/internal/member-tracker.js';
import { OwnershipStateMachine } from '@baton/authority-transfer/internal/ownership-state-machine.js';
import { Roster } from '@baton/authority-transfer/internal/roster.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { FakeCluster } from '@baton/testing/internal/fakes/fake-cluster.js';

// A follower is answered by its leader before it applied its own proposal, as a Raft follower
// forwarding it is: its view lags the answers by LAG_MS.
const LAG_MS = 100;
const roster = new Roster({
  east: { members: { 'east-1': { public: 'http://e1' } } },
  west: { members: { 'west-1': { public: 'http://w1' } } },
});

test('a raw move answered at a follower is answered once that follower applied it: a write there right after sees the new home', async (t) => {
  const clock = new VirtualClock();
  const cluster = new FakeCluster(new OwnershipStateMachine(), { members: ['east-1', 'west-1'], clock, followerApplyLagMs: LAG_MS });
  const follower = cluster.member('west-1');
  const commands = new FailoverCommands(follower as never, new MemberTracker(clock, roster, 'west-1'), roster, { clock });
  let answered = false;
  const move = commands.transfer({ id: 'establish', authority: 'proj', target: 'east' }).then((outcome) => {
    answered = true;
    return outcome;
  });
  for (let i = 0; i < 50 && !answered; i++) await clock.advanceAsync(10);
  const outcome = await move;
  t.like(outcome, { authority: 'proj', home: 'east', epoch: 1 });
  t.is(follower.view().state.authorities.get('proj')?.home, 'east', 'the answering member holds the move it answered');
  t.true(follower.view().applied.index >= outcome.commit_index);
});
