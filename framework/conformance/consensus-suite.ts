import type { ExecutionContext, TestFn } from 'ava';
import {
  NotAppendedError,
  OutcomeUnknownError,
  ReadUnavailableError,
  type AppliedEntry,
  type Leadership,
  type MetadataConsensus,
  type Receipt,
  type StateMachine,
  type MemberId,
} from '@baton/contracts';
import {
  kvStateMachine,
  type KvCommand,
  type KvResult,
  type KvState,
} from './kv-state-machine.js';
import { checkLinearizability, describeIllegal } from './linearizability/checker.js';
import { HistoryRecorder } from './linearizability/history.js';
import { kvRegisterModel } from './linearizability/kv-register-model.js';
import { SeededRng } from './seeded-rng.js';
import { flushMicrotasks } from './virtual-clock.js';

export type KvConsensus = MetadataConsensus<KvState, KvCommand, KvResult>;

/**
 * A running group of members replicating the suite's state machine, made fresh for each test.
 * Time is the cluster's: `advance` moves it (a virtual clock advances, firing timers and
 * letting promise continuations run; a real clock just sleeps), and every deadline in the suite
 * is counted in those milliseconds, so one suite serves simulated and real clusters alike.
 */
export interface ConsensusCluster {
  /** The members, all voters, all reachable. */
  members: KvConsensus[];
  advance(ms: number): Promise<void>;
  /** Stops every member and releases what the cluster holds. Runs after each test. */
  stop(): Promise<void> | void;
  /**
   * Makes the current leader lose leadership (isolate it, transfer leadership, or, for a fake,
   * say so), so that leadership moves to a higher term. If it partitions anything, `heal` is
   * called once a new leader is in place. Needed when `supports.depose`.
   */
  depose?(): Promise<void> | void;
  /** Cuts member `index` off from the others until `heal`. Needed when `supports.isolate`. */
  isolate?(index: number): Promise<void> | void;
  heal?(): Promise<void> | void;
  /**
   * Starts a new, empty member that is not a voter yet, for the test that adds it and checks
   * that it catches up. When absent, membership is tested with an id no process answers for.
   */
  spawn?(): Promise<{ id: MemberId; member: KvConsensus }> | { id: MemberId; member: KvConsensus };
}

export interface ConsensusSuiteOptions {
  /** ava's `test` function of the calling test file. */
  test: TestFn;
  /** Prefixes every test title, e.g. "raft (3 voters, simulated)". */
  name: string;
  /** Builds a cluster of `size` members over `machine` (always the suite's KV state machine). */
  cluster: (options: {
    size: number;
    machine: StateMachine<KvState, KvCommand, KvResult>;
  }) => Promise<ConsensusCluster> | ConsensusCluster;
  /** How many members the suite's clusters have (default 3; 1 for a single-member fake). */
  size?: number;
  /**
   * How long, in cluster milliseconds, anything may take to happen (an election, a commit, a
   * follower catching up) before the test fails. Default 30,000.
   */
  deadlineMs?: number;
  /** How far `advance` moves per step while waiting (default 10 ms). */
  stepMs?: number;
  /**
   * The fault hooks the cluster provides, which add the tests that need them: `depose` (a
   * leadership change) and `isolate` (an isolated leader replaced, 3 or more members).
   */
  supports?: { depose?: boolean; isolate?: boolean };
}

/** What a test of the suite works with: the cluster and waits bounded by the deadline. */
interface Harness {
  cluster: ConsensusCluster;
  members: KvConsensus[];
  /** Resolves (or rejects) as `promise` does, advancing cluster time; fails past the deadline. */
  settle<T>(promise: Promise<T>, what: string): Promise<T>;
  /** Advances cluster time until `condition` holds; fails past the deadline. */
  waitFor(condition: () => boolean, what: string): Promise<void>;
  leader(): Promise<{ index: number; leadership: Leadership }>;
}

/**
 * The conformance suite of the MetadataConsensus contract (framework/contracts/
 * metadata-consensus.ts): proposals on any member, receipts, idempotent replay and key reuse,
 * watch order on every member, view versus linearizable read, leadership, membership, a
 * linearizable history under concurrent clients, and, when the cluster can inject them,
 * leadership changes and isolation.
 */
export function consensusSuite(options: ConsensusSuiteOptions): void {
  const { test, name } = options;
  const size = options.size ?? 3;
  const deadlineMs = options.deadlineMs ?? 30_000;
  const stepMs = options.stepMs ?? 10;
  const title = (what: string) => `${name} › ${what}`;

  const open = async (t: ExecutionContext): Promise<Harness> => {
    const cluster = await options.cluster({ size, machine: kvStateMachine });
    t.teardown(() => cluster.stop());
    if (cluster.members.length !== size) {
      throw new Error(
        `the cluster factory built ${cluster.members.length} members, the suite asked for ${size}`,
      );
    }
    const waitFor = async (condition: () => boolean, what: string) => {
      await flushMicrotasks();
      for (let waited = 0; !condition(); waited += stepMs) {
        if (waited >= deadlineMs)
          throw new Error(`${what}: still not true after ${deadlineMs} ms of cluster time`);
        await cluster.advance(stepMs);
      }
    };
    const settle = async <T>(promise: Promise<T>, what: string): Promise<T> => {
      let settled = false;
      const observed = promise.finally(() => (settled = true));
      observed.catch(() => {});
      await waitFor(() => settled, `${what} did not settle`);
      return observed;
    };
    const leader = async () => {
      let found: { index: number; leadership: Leadership } | undefined;
      // A deposed leader may still believe it leads until it hears the new term: the leader is
      // the one that claims it in the highest term.
      await waitFor(() => {
        found = undefined;
        cluster.members.forEach((m, index) => {
          const leadership = m.leadership();
          if (leadership.isLeader && (!found || leadership.term > found.leadership.term)) {
            found = { index, leadership };
          }
        });
        return found !== undefined;
      }, 'a member leads');
      return found!;
    };
    return { cluster, members: cluster.members, settle, waitFor, leader };
  };

  const put = (key: string, value: string): KvCommand => ({ op: 'put', key, value });
  const get = (key: string): KvCommand => ({ op: 'get', key });
  const appliedEverywhere = (h: Harness, receipt: Receipt<unknown>) =>
    h.waitFor(
      () => h.members.every((m) => m.view().applied.index >= receipt.position.index),
      `every member applies index ${receipt.position.index}`,
    );

  test(title('a proposal on any member commits, with its result and position'), async (t) => {
    const h = await open(t);
    let previous: string | null = null;
    let lastIndex = 0;
    for (const [i, member] of h.members.entries()) {
      const receipt = await h.settle(
        member.propose(put('k', `from-${i}`)),
        `proposal on member ${i}`,
      );
      t.false(receipt.replayed);
      t.deepEqual(receipt.result, { op: 'put', previous });
      t.true(receipt.position.index > lastIndex, 'positions increase');
      t.true(receipt.position.term >= 1);
      previous = `from-${i}`;
      lastIndex = receipt.position.index;
    }
    await h.waitFor(
      () => h.members.every((m) => m.view().state.data.k === previous),
      'every member applies the last put',
    );
  });

  test(title('apply sees the position the receipt reports'), async (t) => {
    const h = await open(t);
    const receipt = await h.settle(h.members[0].propose(put('k', 'v')), 'proposal');
    await appliedEverywhere(h, receipt);
    for (const member of h.members) {
      t.deepEqual(member.view().state.lastPosition, receipt.position);
      t.deepEqual(member.view().applied, receipt.position, 'nothing else was applied after it');
    }
  });

  test(
    title('the same key and command replay the first decision, through every member'),
    async (t) => {
      const h = await open(t);
      const first = await h.settle(
        h.members[0].propose(put('k', 'once'), { idempotencyKey: 'op-1' }),
        'first proposal',
      );
      t.false(first.replayed);
      await h.settle(h.members[0].propose(put('k', 'later')), 'a later write');
      for (const [i, member] of h.members.entries()) {
        const again = await h.settle(
          member.propose(put('k', 'once'), { idempotencyKey: 'op-1' }),
          `retry on member ${i}`,
        );
        t.deepEqual(
          again,
          { ...first, replayed: true },
          `member ${i} replays the original decision`,
        );
      }
      await h.waitFor(
        () => h.members.every((m) => m.view().state.commandsApplied === 2),
        'both commands applied',
      );
      t.true(
        h.members.every((m) => m.view().state.data.k === 'later'),
        'the retry changed nothing',
      );
    },
  );

  test(title('concurrent proposals under one key commit once'), async (t) => {
    const h = await open(t);
    const attempts = h.members
      .flatMap((m) => [m, m])
      .map((m) => m.propose(put('k', 'v'), { idempotencyKey: 'dup' }));
    const receipts = await h.settle(Promise.all(attempts), 'concurrent proposals');
    t.is(receipts.filter((r) => !r.replayed).length, 1, 'exactly one is the decision');
    t.true(
      receipts.every(
        (r) =>
          r.position.index === receipts[0].position.index &&
          r.position.term === receipts[0].position.term,
      ),
    );
    await h.waitFor(
      () => h.members.every((m) => m.view().state.commandsApplied === 1),
      'applied once',
    );
  });

  test(
    title('a key reused for a different command is refused, on every member, and changes nothing'),
    async (t) => {
      const h = await open(t);
      const first = await h.settle(
        h.members[0].propose(put('k', 'a'), { idempotencyKey: 'op' }),
        'first',
      );
      await appliedEverywhere(h, first);
      for (const [i, member] of h.members.entries()) {
        const error = await h.settle(
          member.propose(put('k', 'b'), { idempotencyKey: 'op' }).then(
            () => undefined,
            (e: unknown) => e,
          ),
          `reuse on member ${i}`,
        );
        t.true(
          error instanceof NotAppendedError,
          `member ${i} refuses with NotAppendedError, got ${String(error)}`,
        );
        t.is((error as NotAppendedError).reason, 'key_reused');
      }
      const check = await h.settle(h.members[0].read(), 'read');
      t.is(check.state.data.k, 'a');
      t.is(check.state.commandsApplied, 1);
    },
  );

  test(
    title('watchers on every member see every entry once, in log order, with the view after it'),
    async (t) => {
      const h = await open(t);
      const seen = h.members.map(() => [] as Array<AppliedEntry<KvCommand, KvResult>>);
      const unwatch = h.members.map((member, i) =>
        member.watch((view, entry) => {
          t.deepEqual(
            view.applied,
            entry.position,
            'the view passed is the one right after the entry',
          );
          seen[i].push(entry);
        }),
      );
      const proposals = h.members.flatMap((member, i) =>
        [0, 1, 2].map((n) => member.propose(put(`k${n}`, `${i}.${n}`))),
      );
      const receipts = await h.settle(Promise.all(proposals), 'proposals');
      const total = receipts.length;
      await h.waitFor(() => seen.every((s) => s.length >= total), 'every watcher sees every entry');
      for (const [i, entries] of seen.entries()) {
        t.is(entries.length, total, `member ${i} saw each entry once`);
        for (let k = 1; k < entries.length; k++)
          t.true(entries[k].position.index > entries[k - 1].position.index, 'log order');
        t.deepEqual(entries, seen[0], `member ${i} saw the same log as member 0`);
      }
      const byIndex = new Map(seen[0].map((e) => [e.position.index, e]));
      for (const r of receipts)
        t.deepEqual(
          byIndex.get(r.position.index)?.result,
          r.result,
          'watchers see the committed result',
        );

      for (const stop of unwatch) stop();
      const after = await h.settle(
        h.members[0].propose(put('k0', 'after')),
        'proposal after unwatch',
      );
      await appliedEverywhere(h, after);
      t.true(
        seen.every((s) => s.length === total),
        'an unsubscribed watcher is not called',
      );
    },
  );

  test(title('a read on any member includes every write committed before it'), async (t) => {
    const h = await open(t);
    for (let round = 0; round < 3; round++) {
      for (const [writer, member] of h.members.entries()) {
        const receipt = await h.settle(member.propose(put('k', `${round}.${writer}`)), 'write');
        for (const [reader, other] of h.members.entries()) {
          const read = await h.settle(other.read(), `read on member ${reader}`);
          t.is(
            read.state.data.k,
            `${round}.${writer}`,
            `member ${reader} reads the write of member ${writer}`,
          );
          t.true(read.applied.index >= receipt.position.index);
        }
      }
    }
  });

  test(title('view is local and never goes backwards'), async (t) => {
    const h = await open(t);
    const last = h.members.map((m) => m.view().applied.index);
    // Every look at a view goes through here, the waits included, so no regression hides.
    const look = (m: number) => {
      const index = h.members[m].view().applied.index;
      t.true(index >= last[m], `member ${m} applied index went from ${last[m]} to ${index}`);
      last[m] = Math.max(last[m], index);
      return index;
    };
    for (let i = 0; i < 5; i++) {
      const receipt = await h.settle(h.members[i % size].propose(put('k', `${i}`)), 'write');
      await h.waitFor(
        () => h.members.every((_, m) => look(m) >= receipt.position.index),
        'every member applies the write',
      );
    }
  });

  test(title('exactly one leader, which every member eventually follows'), async (t) => {
    const h = await open(t);
    const { index, leadership } = await h.leader();
    t.is(leadership.self, h.members[index].leadership().self);
    t.is(leadership.leader, leadership.self);
    await h.waitFor(
      () => h.members.every((m) => m.leadership().leader === leadership.self),
      `every member follows ${leadership.self}`,
    );
    const leaders = h.members.filter((m) => m.leadership().isLeader);
    t.is(leaders.length, 1);
    for (const member of h.members) t.is(member.leadership().term, leadership.term, 'one term');
  });

  test(
    title('membership: a voter added and removed is seen by every member and by the state machine'),
    async (t) => {
      const h = await open(t);
      const { index } = await h.leader();
      const before = [...h.members[0].membership().voters].sort();
      t.is(before.length, size);
      const spawned = h.cluster.spawn ? await h.cluster.spawn() : undefined;
      const newcomer = spawned?.id ?? 'suite-spare-voter';
      await h.settle(h.members[index].addVoter(newcomer), `add ${newcomer}`);
      const grown = [...before, newcomer].sort();
      const everyone = spawned ? [...h.members, spawned.member] : h.members;
      await h.waitFor(
        () => h.members.every((m) => sameList([...m.membership().voters].sort(), grown)),
        'every member sees the new voter',
      );
      await h.waitFor(
        () => h.members.every((m) => sameList(m.view().state.voters, grown)),
        'membershipChanged reaches every state machine',
      );

      const receipt = await h.settle(
        h.members[index].propose(put('k', 'with-newcomer')),
        'write with the newcomer',
      );
      await h.waitFor(
        () => everyone.every((m) => m.view().applied.index >= receipt.position.index),
        'the newcomer catches up',
      );
      t.true(everyone.every((m) => m.view().state.data.k === 'with-newcomer'));

      const { index: current } = await h.leader();
      await h.settle(h.members[current].removeVoter(newcomer), `remove ${newcomer}`);
      await h.waitFor(
        () => h.members.every((m) => sameList([...m.membership().voters].sort(), before)),
        'every member sees the removal',
      );
      // ApplyContext.voters is sorted by contract, so the state machine's copy compares as is.
      await h.waitFor(
        () => h.members.every((m) => sameList(m.view().state.voters, before)),
        'membershipChanged reports the removal',
      );
      const after = await h.settle(
        h.members[0].propose(put('k', 'without')),
        'write after removal',
      );
      t.false(after.replayed);
    },
  );

  test(title('concurrent clients on every member produce a linearizable history'), async (t) => {
    const h = await open(t);
    const recorder = new HistoryRecorder<KvCommand, KvResult>();
    const keys = ['a', 'b'];
    const client = async (id: number) => {
      const member = h.members[id % size];
      const rng = new SeededRng(id + 1);
      for (let n = 0; n < 16; n++) {
        const key = rng.pick(keys);
        const kind = rng.int(4);
        // Compare-and-set expects absence or one of the values some client may have written.
        const expected = rng.chance(0.3) ? null : `${rng.int(6)}.${rng.int(n + 1)}`;
        const command: KvCommand =
          kind === 0
            ? get(key)
            : kind === 1
              ? { op: 'cas', key, expected, value: `${id}.${n}` }
              : put(key, `${id}.${n}`);
        if (kind === 3) {
          // A linearizable read is an operation of the history too.
          const op = recorder.invoke(id, get(key));
          try {
            const read = await member.read();
            op.ok({ op: 'get', value: read.state.data[key] ?? null });
          } catch (error) {
            // A read that could not be served observed nothing.
            if (error instanceof ReadUnavailableError) op.failed();
            else throw error;
          }
          continue;
        }
        const op = recorder.invoke(id, command);
        try {
          op.ok((await member.propose(command)).result);
        } catch (error) {
          if (error instanceof NotAppendedError) op.failed();
          else if (error instanceof OutcomeUnknownError) op.unknown();
          else throw error;
        }
      }
    };
    await h.settle(Promise.all([0, 1, 2, 3, 4, 5].map(client)), 'clients');
    const result = checkLinearizability(kvRegisterModel, recorder.history());
    t.is(result.outcome, 'ok', describeIllegal(kvRegisterModel, result));
  });

  test(title('an already aborted proposal is refused as not appended, and changes nothing'), async (t) => {
    const h = await open(t);
    const controller = new AbortController();
    controller.abort();
    const error = await h.settle(
      h.members[0].propose(put('k', 'v'), { signal: controller.signal }).then(
        () => undefined,
        (e: unknown) => e,
      ),
      'aborted proposal',
    );
    t.true(error instanceof NotAppendedError, `expected NotAppendedError, got ${String(error)}`);
    t.is((error as NotAppendedError).reason, 'aborted');
    const view = await h.settle(h.members[0].read(), 'read after the aborted proposal');
    t.false('k' in view.state.data, 'the aborted command never applied');
  });

  if (options.supports?.depose) {
    test(
      title('leadership changes reach onLeadership on every member, and proposals still commit'),
      async (t) => {
        const h = await open(t);
        if (!h.cluster.depose)
          throw new Error('supports.depose is declared but the cluster has no depose()');
        const { leadership: before } = await h.leader();
        const heard = h.members.map(() => [] as Leadership[]);
        const unsubscribe = h.members.map((m, i) => m.onLeadership((l) => heard[i].push(l)));
        const first = await h.settle(
          h.members[0].propose(put('k', 'before'), { idempotencyKey: 'before' }),
          'write before',
        );
        await h.cluster.depose!();
        await h.waitFor(
          () => h.members.some((m) => m.leadership().isLeader && m.leadership().term > before.term),
          'a leader in a later term',
        );
        const now = (await h.leader()).leadership;
        await h.cluster.heal?.();
        await h.waitFor(
          () =>
            heard.every((events) =>
              events.some((l) => l.term >= now.term && l.leader === now.self),
            ),
          `every member hears of leader ${now.self} in term ${now.term}`,
        );
        for (const events of heard) {
          for (let k = 1; k < events.length; k++)
            t.true(events[k].term >= events[k - 1].term, 'terms never go back');
        }
        const retry = await h.settle(
          h.members[0].propose(put('k', 'before'), { idempotencyKey: 'before' }),
          'retry under the new leader',
        );
        t.deepEqual(
          retry,
          { ...first, replayed: true },
          'the decision survives the leadership change',
        );
        const after = await h.settle(h.members[size - 1].propose(put('k', 'after')), 'write after');
        t.true(after.position.term >= now.term);
        for (const stop of unsubscribe) stop();
      },
    );
  }

  if (options.supports?.isolate && size >= 3) {
    test(
      title('an isolated leader is replaced; the majority commits; after healing it catches up'),
      async (t) => {
        const h = await open(t);
        if (!h.cluster.isolate || !h.cluster.heal) {
          throw new Error('supports.isolate is declared but the cluster lacks isolate() or heal()');
        }
        const { index: old, leadership: before } = await h.leader();
        const decided = await h.settle(
          h.members[old].propose(put('k', 'decided'), { idempotencyKey: 'across' }),
          'write',
        );
        await h.cluster.isolate(old);
        const majority = h.members.filter((_, i) => i !== old);
        await h.waitFor(
          () => majority.some((m) => m.leadership().isLeader && m.leadership().term > before.term),
          'the majority elects a new leader',
        );
        const stranded = h.members[old].propose(put('k', 'stranded'), { timeoutMs: 5_000 }).then(
          () => 'committed',
          (e: unknown) => e,
        );
        const replay = await h.settle(
          majority[0].propose(put('k', 'decided'), { idempotencyKey: 'across' }),
          'retry via the majority',
        );
        t.deepEqual(replay, { ...decided, replayed: true }, 'the new leader knows the decision');
        const fresh = await h.settle(
          majority[1].propose(put('k', 'majority')),
          'write via the majority',
        );
        const outcome = await h.settle(stranded, 'the isolated proposal');
        t.true(
          outcome instanceof NotAppendedError || outcome instanceof OutcomeUnknownError,
          `an isolated member cannot commit; got ${String(outcome)}`,
        );

        await h.cluster.heal!();
        await appliedEverywhere(h, fresh);
        const reads = await h.settle(
          Promise.all(h.members.map((m) => m.read())),
          'reads after healing',
        );
        for (const read of reads)
          t.deepEqual(read.state.data, reads[0].state.data, 'every member converges');
        // An answer of "not appended" promises the stranded write never takes effect.
        const expected =
          outcome instanceof NotAppendedError ? ['majority'] : ['majority', 'stranded'];
        t.true(expected.includes(reads[0].state.data.k), `k is ${reads[0].state.data.k}`);
        t.is(h.members.filter((m) => m.leadership().isLeader).length, 1);
      },
    );
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
