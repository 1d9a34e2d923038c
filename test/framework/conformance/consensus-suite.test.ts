import test from 'ava';
import { consensusSuite } from '@baton/conformance/internal/consensus-suite.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';

// The fake single-member consensus is held to the same contract as the real ones, so the
// variants' unit tests built on it test behaviour a real cluster has.
consensusSuite({
  test,
  name: 'LocalConsensus',
  size: 1,
  supports: { depose: true },
  cluster: ({ machine }) => {
    const clock = new VirtualClock();
    const member = new LocalConsensus(machine, { self: 'solo', clock });
    return {
      members: [member],
      advance: (ms) => clock.advanceAsync(ms),
      stop: () => member.stop(),
      depose: () => {
        member.setLeadership({ isLeader: false });
        member.setLeadership({ isLeader: true });
      },
    };
  },
});
