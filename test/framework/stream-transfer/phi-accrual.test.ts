import { setImmediate as macrotask } from 'node:timers/promises';
import test from 'ava';
import fc from 'fast-check';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import { LivenessObserver } from '@baton/stream-transfer/internal/liveness-observer.js';
import { livenessOf, type StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { NodeLease } from '@baton/stream-transfer/internal/node-lease.js';
import {
  earliestDeadMs,
  NodeLivenessTracker,
  type NodeLivenessOptions,
} from '@baton/stream-transfer/internal/node-liveness.js';
import { livenessOptions } from '@baton/stream-transfer/internal/node-options.js';
import {
  ArrivalWindow,
  DEFAULT_PHI_ACCRUAL_OPTIONS,
  phi,
} from '@baton/stream-transfer/internal/phi-accrual.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { MemoryObjectStore } from '@baton/plugin-memory/internal/memory-object-store.js';

const PHI: NodeLivenessOptions = {
  renewEveryMs: 200,
  suspectAfterMs: 600,
  deadAfterMs: 3_000,
  autoFailoverAfterMs: 0,
  detector: { kind: 'phi', minDeadAfterMs: 900, ...DEFAULT_PHI_ACCRUAL_OPTIONS },
};

test('phi grows with the silence and, beyond the usual gap, falls as the gaps spread', (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 5_000 }),
      fc.integer({ min: 1, max: 5_000 }),
      fc.integer({ min: 1, max: 1_000 }),
      (a, b, spread) => {
        const [short, long] = a <= b ? [a, b] : [b, a];
        const grows = phi(short, 700, spread) <= phi(long, 700, spread);
        // Beyond the usual gap, a wider spread makes a silence more likely, so less of a verdict.
        const calmer = long <= 700 || phi(long, 700, spread * 2) <= phi(long, 700, spread) + 1e-9;
        return grows && calmer;
      },
    ),
  );
  t.true(phi(700, 700, 50) < 0.5, 'a silence as long as the usual gap is no evidence');
  t.true(phi(1_000, 700, 50) > 8, 'six spreads beyond it is');
  t.true(Number.isFinite(phi(1e6, 700, 1)), 'far in the tail phi stays finite');
});

test('the arrival window keeps the last gaps only, with their mean and spread', (t) => {
  const window = new ArrivalWindow(3);
  for (const gap of [1_000, 1_000, 100, 200, 300]) window.add(gap);
  t.is(window.size, 3);
  t.is(window.mean, 200);
  t.is(Math.round(window.stdDev * 1000) / 1000, Math.round(Math.sqrt(20_000 / 3) * 1000) / 1000);
});

test('with regular renewals the phi detector declares a silent node Dead well before the fixed ceiling, never before its floor', (t) => {
  const clock = new VirtualClock();
  const tracker = new NodeLivenessTracker(clock, 'a', PHI);
  for (let i = 0; i < 20; i++) {
    clock.advance(200);
    tracker.heard('b');
  }
  let silence = 0;
  while (tracker.state('b') !== 'Dead') {
    clock.advance(10);
    silence += 10;
  }
  t.true(silence >= 900, `not before the floor (Dead after ${silence} ms)`);
  t.true(silence < 1_500, `well before the 3 s ceiling (Dead after ${silence} ms)`);
});

test('gaps that spread out (a loaded machine) make the same silence no evidence: the phi detector waits longer, up to the fixed ceiling', (t) => {
  const clock = new VirtualClock();
  const tracker = new NodeLivenessTracker(clock, 'a', PHI);
  const gaps = [200, 900, 150, 1_100, 300, 800, 200, 1_000];
  for (const gap of gaps) {
    clock.advance(gap);
    tracker.heard('b');
  }
  clock.advance(1_300);
  t.not(tracker.state('b'), 'Dead', 'a silence such gaps have seen before is no verdict');
  clock.advance(1_700);
  t.is(tracker.state('b'), 'Dead', 'the fixed threshold is a ceiling');
});

test('a node seen renewing fewer than four times is judged by the fixed ceiling alone', (t) => {
  const clock = new VirtualClock();
  const tracker = new NodeLivenessTracker(clock, 'a', PHI);
  for (let i = 0; i < 3; i++) {
    clock.advance(200);
    tracker.heard('b');
  }
  clock.advance(2_900);
  t.is(tracker.state('b'), 'Suspect');
  t.is(tracker.phi('b'), undefined);
  clock.advance(100);
  t.is(tracker.state('b'), 'Dead');
});

test('the lease a node holds is the earliest Dead verdict, and the options are checked', (t) => {
  t.is(earliestDeadMs(PHI), 900);
  t.is(earliestDeadMs({ deadAfterMs: 3_000 }), 3_000);
  t.throws(
    () =>
      new NodeLivenessTracker(new VirtualClock(), 'a', {
        ...PHI,
        detector: { ...PHI.detector!, minDeadAfterMs: 500 } as never,
      }),
    {
      message: /minDeadAfterMs/,
    },
  );
  const parsed = livenessOptions.safeParse({ detector: { kind: 'phi', minDeadAfterMs: 5_000 } });
  t.false(parsed.success);
  t.deepEqual(parsed.error?.issues[0]?.path, ['detector', 'minDeadAfterMs']);
  const defaults = livenessOptions.parse({
    renewEveryMs: 200,
    suspectAfterMs: 600,
    detector: { kind: 'phi' },
  });
  t.like(defaults.detector, {
    kind: 'phi',
    threshold: 8,
    minDeadAfterMs: 900,
    acceptablePauseMs: 500,
  });
  t.like(livenessOptions.parse({}).detector, { kind: 'fixed' });
});

/** The metadata leader observing three nodes' leases on virtual time, with the phi detector. */
async function cluster(options: NodeLivenessOptions) {
  const clock = new VirtualClock();
  const store = new MemoryObjectStore();
  const logger = createSilentLogger();
  const consensus = new LocalConsensus<StreamMetadata, StreamCommand, StreamResult>(
    new StreamStateMachine(),
    { self: 'a' },
  );
  for (const node of ['a', 'b', 'c'])
    await consensus.propose({ type: 'register-node', node, address: `http://${node}`, slots: 10 });
  for (const s of ['s1', 's2'])
    await consensus.propose({ type: 'create-stream', stream: s, node: 'c' });
  const leases = new Map<string, NodeLease>();
  for (const node of ['a', 'b', 'c']) {
    const lease = new NodeLease({
      self: node,
      boot: node,
      consensus,
      store,
      clock,
      logger,
      renewEveryMs: options.renewEveryMs,
      deadAfterMs: earliestDeadMs(options),
    });
    leases.set(node, lease);
    lease.start();
  }
  const observer = new LivenessObserver({ self: 'a', consensus, store, clock, logger, options });
  observer.start();
  const run = async (ms: number) => {
    for (let elapsed = 0; elapsed < ms; elapsed += 10) {
      for (let i = 0; i < 3; i++) await macrotask();
      clock.advance(10);
    }
  };
  const stop = () => {
    observer.stop();
    for (const lease of leases.values()) lease.stop();
  };
  return { clock, consensus, leases, run, stop };
}

test('on a quiet cluster a stopped node is failed over about a second after its last renewal, with phi in the evidence', async (t) => {
  const c = await cluster(PHI);
  await c.run(3_000);
  const owner = () => c.consensus.view().state.stream('s1')!.owner;
  t.is(owner(), 'c');
  c.leases.get('c')!.stop();
  const stoppedAt = c.clock.now();
  let movedAt: number | undefined;
  for (let elapsed = 0; elapsed < 3_000 && movedAt === undefined; elapsed += 10) {
    await c.run(10);
    if (owner() !== 'c') movedAt = c.clock.now();
  }
  c.stop();
  t.not(movedAt, undefined, 'the streams moved');
  t.true(
    movedAt! - stoppedAt >= 900 - PHI.renewEveryMs,
    'not before the lease the node held could have lapsed',
  );
  t.true(
    movedAt! - stoppedAt < 1_500,
    `moved ${movedAt! - stoppedAt} virtual ms after the last renewal`,
  );
  const failover = c.consensus.log().find((e) => e.command.type === 'failover');
  t.regex((failover!.command as { evidence: string }).evidence, /phi \d+\.\d/);
  t.is(livenessOf(c.consensus.view().state.node('c')!), 'Dead');
});

test('pauses of 400 ms between renewals fail no node over', async (t) => {
  const c = await cluster(PHI);
  await c.run(3_000);
  const lease = c.leases.get('b')!;
  for (let pause = 0; pause < 20; pause++) {
    lease.stop();
    await c.run(400);
    lease.start();
    await c.run(400);
  }
  c.stop();
  t.is(c.consensus.log().filter((e) => e.command.type === 'failover').length, 0);
  t.false(
    c.consensus
      .log()
      .some(
        (e) =>
          e.command.type === 'node-liveness' &&
          (e.command as { liveness: string }).liveness === 'Dead',
      ),
  );
});
