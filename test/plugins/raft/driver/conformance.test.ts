import test from 'ava';
import { consensusSuite } from '@baton/conformance/internal/consensus-suite.js';
import { SimCluster } from '../support/sim-cluster.js';

// The MetadataConsensus conformance suite against three Raft members on the simulated
// network and a virtual clock, with the fault hooks it can use.
consensusSuite({
  test,
  name: 'raft (3 voters, simulated network)',
  size: 3,
  supports: { depose: true, isolate: true },
  cluster: async ({ machine }) => {
    const ids = ['n1', 'n2', 'n3'];
    const c = new SimCluster(ids, {}, 7, { minDelayMs: 1, maxDelayMs: 3 }, machine);
    await c.startAll();
    const members = ids.map((id) => c.get(id));
    let spawned = 0;
    return {
      members,
      advance: (ms) => c.clock.advanceAsync(ms),
      stop: () => c.stopAll(),
      // Hands leadership to another member and waits until the old leader has stepped down,
      // so nobody still believes in the old term when the suite looks for the leader.
      depose: async () => {
        const leader = members.find((m) => m.leadership().isLeader);
        if (!leader) return;
        const term = leader.leadership().term;
        leader.transferLeadership(members.find((m) => m !== leader)!.self);
        await c.until(() => !leader.leadership().isLeader && members.some((m) => m.leadership().isLeader && m.leadership().term > term), 30_000, 'leadership to move');
      },
      isolate: (index) => c.network.isolate(members[index].self),
      heal: () => c.network.heal(),
      spawn: async () => {
        const id = `n${4 + spawned++}`;
        return { id, member: await c.start(id) };
      },
    };
  },
});
