import test from 'ava';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import type { ClusterMember, NemesisCluster, WorkloadFault } from './cluster.js';
import type { MemberProcess } from './member-process.js';
import { Nemesis } from './nemesis.js';
import { OperationLog } from './operation-log.js';

/** A member whose process only says it runs: the schedule is under test, not the process. */
function stubMember(id: string): ClusterMember {
  const process = {
    running: true,
    kill: async () => undefined,
    pause: () => undefined,
    resume: () => undefined,
    start: () => undefined,
  } as unknown as MemberProcess;
  return { id, process, ports: [], dir: '' };
}

/** The kinds of the first `count` faults of a seed's schedule with `firstKinds` asked for. */
async function firstFaults(
  seed: number,
  count: number,
  firstKinds: string[],
  onlyKinds?: string[],
): Promise<string[]> {
  const stop = new AbortController();
  const made: string[] = [];
  const fault = (kind: string): WorkloadFault => ({
    kind,
    apply: async () => {
      made.push(kind);
      if (made.length >= count) stop.abort();
      return kind;
    },
  });
  const cluster: NemesisCluster = {
    members: [stubMember('m1'), stubMember('m2'), stubMember('m3')],
    leader: async () => 'm1',
    waitReady: async () => undefined,
    storeOutages: [],
    faults: ['a', 'b', 'c', 'd'].map(fault),
  };
  const nemesis = new Nemesis(cluster, new SeededRng(seed), new OperationLog(), {
    quietMs: [1, 1],
    holdMs: [1, 1],
    firstKinds,
    onlyKinds,
  });
  await nemesis.run(stop.signal);
  return nemesis.windows.map((w) => w.kind);
}

test('the first round begins with the fault kinds a test asks for, in a drawn order, then the others', async (t) => {
  const orders = new Set<string>();
  for (let seed = 1; seed <= 12; seed++) {
    const kinds = await firstFaults(seed, 3, ['c', 'd']);
    t.deepEqual(kinds.slice(0, 2).sort(), ['c', 'd'], `seed ${seed}: ${kinds.join(', ')}`);
    t.false(['c', 'd'].includes(kinds[2]), `seed ${seed}: the third fault is another kind`);
    orders.add(kinds.slice(0, 2).join());
  }
  t.is(orders.size, 2, 'both orders of the asked kinds are drawn');
});

test('a kind asked for that the cluster cannot make is left out of the first round', async (t) => {
  for (let seed = 1; seed <= 6; seed++) {
    const kinds = await firstFaults(seed, 2, ['c', 'partition']);
    t.is(kinds[0], 'c', `seed ${seed}: ${kinds.join(', ')}`);
    t.false(kinds.includes('partition'), 'no firewall: no partition');
  }
});

test("a run limited to some kinds makes those only, never the nemesis's own kill or pause", async (t) => {
  for (let seed = 1; seed <= 6; seed++) {
    const kinds = await firstFaults(seed, 8, [], ['b', 'd']);
    t.is(kinds.length, 8);
    t.deepEqual([...new Set(kinds)].sort(), ['b', 'd'], `seed ${seed}: ${kinds.join(', ')}`);
  }
});
