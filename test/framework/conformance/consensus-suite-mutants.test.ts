import test from 'ava';
import type {
  AppliedView,
  Leadership,
  Receipt,
} from '@baton/contracts/internal/metadata-consensus.js';
import { consensusSuite, type KvConsensus } from '@baton/conformance/internal/consensus-suite.js';
import type {
  KvCommand,
  KvResult,
  KvState,
} from '@baton/conformance/internal/kv-state-machine.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { attemptPasses, collectSuite, findTest } from './collect-suite.js';

// Each member below breaks one rule of the MetadataConsensus contract; the suite must notice.

type Overrides = (inner: LocalConsensus<KvState, KvCommand, KvResult>) => Partial<KvConsensus>;

function suiteAgainst(overrides: Overrides) {
  return collectSuite((registerTest) =>
    consensusSuite({
      test: registerTest,
      name: 'mutant',
      size: 1,
      supports: { depose: true },
      deadlineMs: 2_000,
      cluster: ({ machine }) => {
        const clock = new VirtualClock();
        const inner = new LocalConsensus(machine, { self: 'solo', clock });
        const member: KvConsensus = {
          propose: (c, o) => inner.propose(c, o),
          read: (o) => inner.read(o),
          view: () => inner.view(),
          watch: (fn) => inner.watch(fn),
          leadership: () => inner.leadership(),
          onLeadership: (fn) => inner.onLeadership(fn),
          membership: () => inner.membership(),
          addVoter: (m, o) => inner.addVoter(m, o),
          removeVoter: (m, o) => inner.removeVoter(m, o),
          ...overrides(inner),
        };
        return {
          members: [member],
          advance: (ms) => clock.advanceAsync(ms),
          stop: () => inner.stop(),
          depose: () => {
            inner.setLeadership({ isLeader: false });
            inner.setLeadership({ isLeader: true });
          },
        };
      },
    }),
  );
}

const mutants: Array<{ breaks: string; test: string; overrides: Overrides }> = [
  {
    breaks: 'forgets idempotency keys',
    test: 'the same key and command replay',
    overrides: (inner) => ({ propose: (c) => inner.propose(c) }),
  },
  {
    breaks: 'accepts a reused key for another command',
    test: 'a key reused for a different command',
    overrides: (inner) => ({
      propose: (c, o) =>
        inner.propose(c, {
          ...o,
          idempotencyKey: o?.idempotencyKey && `${o.idempotencyKey}:${JSON.stringify(c)}`,
        }),
    }),
  },
  {
    breaks: 'reports a replay as a new decision',
    test: 'concurrent proposals under one key commit once',
    overrides: (inner) => ({
      propose: async (c, o) => ({ ...(await inner.propose(c, o)), replayed: false }),
    }),
  },
  {
    breaks: 'reports a position one past the real one',
    test: 'apply sees the position the receipt reports',
    overrides: (inner) => ({
      propose: async (c, o): Promise<Receipt<KvResult>> => {
        const r = await inner.propose(c, o);
        return { ...r, position: { ...r.position, index: r.position.index + 1 } };
      },
    }),
  },
  {
    breaks: 'calls each watcher twice',
    test: 'watchers on every member see every entry once',
    overrides: (inner) => ({
      watch: (fn) => {
        const a = inner.watch(fn);
        const b = inner.watch(fn);
        return () => (a(), b());
      },
    }),
  },
  {
    breaks: 'keeps calling a watcher after unsubscribe',
    test: 'watchers on every member see every entry once',
    overrides: (inner) => ({ watch: (fn) => (inner.watch(fn), () => {}) }),
  },
  {
    breaks: 'serves reads from a stale copy',
    test: 'a read on any member includes every write',
    overrides: (inner) => {
      let stale: AppliedView<KvState> = structuredClone(inner.view());
      return {
        read: async () => {
          const served = stale;
          stale = structuredClone(inner.view());
          return served;
        },
      };
    },
  },
  {
    breaks: 'serves every read from the state of two reads ago',
    test: 'concurrent clients on every member produce a linearizable history',
    overrides: (inner) => {
      const served: Array<AppliedView<KvState>> = [];
      return {
        read: async () => {
          served.push(structuredClone(inner.view()));
          return served.length > 2 ? served[served.length - 3] : served[0];
        },
      };
    },
  },
  {
    breaks: 'never commits membership changes',
    test: 'membership: a voter added and removed',
    overrides: () => ({ addVoter: async () => {}, removeVoter: async () => {} }),
  },
  {
    breaks: 'never tells onLeadership listeners',
    test: 'leadership changes reach onLeadership',
    overrides: () => ({ onLeadership: (_fn: (l: Leadership) => void) => () => {} }),
  },
  {
    breaks: 'claims to lead without naming itself',
    test: 'exactly one leader',
    overrides: (inner) => ({
      leadership: () => ({ ...inner.leadership(), leader: 'someone-else' }),
    }),
  },
  {
    breaks: 'lets the applied position go backwards',
    test: 'view is local and never goes backwards',
    overrides: (inner) => {
      let calls = 0;
      return {
        view: () => {
          const v = inner.view();
          return ++calls % 3 === 0 ? { ...v, applied: { ...v.applied, index: 0 } } : v;
        },
      };
    },
  },
];

for (const mutant of mutants) {
  test(`the consensus suite catches a member that ${mutant.breaks}`, async (t) => {
    const suite = suiteAgainst(mutant.overrides);
    t.false(
      await attemptPasses(t, findTest(suite, mutant.test)),
      `"${mutant.test}" passed against a member that ${mutant.breaks}`,
    );
  });
}

test('the unbroken fake passes every test the mutants fail', async (t) => {
  const suite = suiteAgainst(() => ({}));
  for (const title of new Set(mutants.map((m) => m.test))) {
    t.true(await attemptPasses(t, findTest(suite, title)), title);
  }
});
