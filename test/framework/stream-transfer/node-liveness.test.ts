import { setImmediate as macrotask } from 'node:timers/promises';
import test from 'ava';
import { StoreUnavailableError } from '@baton/contracts/internal/errors.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import { LivenessObserver } from '@baton/stream-transfer/internal/liveness-observer.js';
import { livenessOf, type NodeLiveness, type StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { NodeLease } from '@baton/stream-transfer/internal/node-lease.js';
import { DEFAULT_NODE_LIVENESS_OPTIONS, NodeLivenessTracker, type NodeLivenessOptions } from '@baton/stream-transfer/internal/node-liveness.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import { LocalConsensus } from '@baton/testing/internal/fakes/local-consensus.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { MemoryObjectStore } from '@baton/plugin-memory/internal/memory-object-store.js';
import { DiskWal } from '@baton/stream-transfer/internal/disk-wal.js';
import { AppendUnavailableError } from '@baton/stream-transfer/internal/errors.js';
import { MemoryWalDisk } from '@baton/stream-transfer/internal/memory-wal-disk.js';
import { SegmentReader } from '@baton/stream-transfer/internal/segments.js';
import { StreamSession } from '@baton/stream-transfer/internal/stream-session.js';

test('the tracker: Alive, then Suspect, then Dead as silence grows; a renewal makes a node Alive; the observer is always Alive', (t) => {
  const clock = new VirtualClock();
  const tracker = new NodeLivenessTracker(clock, 'a', { suspectAfterMs: 1_000, deadAfterMs: 3_000 });
  t.is(tracker.state('b'), 'Alive', 'a node never heard from counts from the start');
  t.is(tracker.lastHeardMsAgo('b'), null);
  clock.advance(1_000);
  t.is(tracker.state('b'), 'Suspect');
  clock.advance(2_000);
  t.is(tracker.state('b'), 'Dead');
  t.is(tracker.state('a'), 'Alive');
  tracker.introduce('late');
  t.is(tracker.state('late'), 'Alive', 'a node registered later counts from when it was first seen');
  tracker.heard('b');
  t.is(tracker.state('b'), 'Alive');
  t.true(tracker.heardSinceStart('b'));
  t.throws(() => new NodeLivenessTracker(clock, 'a', { suspectAfterMs: 2_000, deadAfterMs: 1_000 }), { message: /deadAfterMs/ });
});

const OPTIONS: NodeLivenessOptions = { ...DEFAULT_NODE_LIVENESS_OPTIONS, renewEveryMs: 100, suspectAfterMs: 300, deadAfterMs: 600, autoFailoverAfterMs: 200 };

/** Three registered nodes renewing leases into one store, the metadata leader observing. */
async function cluster(options = OPTIONS) {
  const clock = new VirtualClock();
  const store = new MemoryObjectStore();
  const logger = createSilentLogger();
  const consensus = new LocalConsensus<StreamMetadata, StreamCommand, StreamResult>(new StreamStateMachine(), { self: 'a' });
  for (const node of ['a', 'b', 'c']) await consensus.propose({ type: 'register-node', node, address: `http://${node}`, slots: 10 });
  for (const s of ['s1', 's2']) await consensus.propose({ type: 'create-stream', stream: s, node: 'c' });
  const leases = new Map<string, NodeLease>();
  let boots = 0;
  const renew = (node: string) => {
    const lease = new NodeLease({ self: node, boot: `boot${boots++}`, consensus, store, clock, logger, renewEveryMs: options.renewEveryMs });
    leases.set(node, lease);
    lease.start();
  };
  const observer = new LivenessObserver({ self: 'a', consensus, store, clock, logger, options });
  const liveness = (node: string): NodeLiveness => livenessOf(consensus.view().state.node(node)!);
  const run = async (ms: number) => {
    for (let elapsed = 0; elapsed < ms; elapsed += 10) {
      for (let i = 0; i < 3; i++) await macrotask();
      clock.advance(10);
    }
  };
  /** Moves virtual time until `condition` holds; fails after `virtualMs`. */
  const until = async (condition: () => boolean, what: string, virtualMs = 5_000) => {
    for (let elapsed = 0; !condition(); elapsed += 10) {
      if (elapsed >= virtualMs) throw new Error(`timed out after ${virtualMs} virtual ms waiting for ${what}`);
      await run(10);
    }
  };
  return { clock, store, consensus, leases, renew, observer, liveness, run, until };
}

test('the metadata leader publishes a silent node Suspect, then Dead, fails it over, and publishes it Alive when it renews again', async (t) => {
  const c = await cluster();
  for (const node of ['a', 'b', 'c']) c.renew(node);
  c.observer.start();
  await c.run(1_000);
  t.deepEqual(['a', 'b', 'c'].map(c.liveness), ['Alive', 'Alive', 'Alive']);
  t.true(c.observer.lastRenewalMsAgo('b')! <= OPTIONS.renewEveryMs * 2);
  const commandsBefore = c.consensus.log().length;
  await c.run(2_000);
  t.is(c.consensus.log().length, commandsBefore, 'renewals cost no consensus command');

  c.leases.get('c')!.stop();
  await c.until(() => c.liveness('c') === 'Suspect', 'c to be published Suspect');
  t.is(c.liveness('b'), 'Alive');
  await c.until(() => c.liveness('c') === 'Dead', 'c to be published Dead');
  const state = () => c.consensus.view().state;
  await c.until(() => ['s1', 's2'].every((s) => state().stream(s)!.owner !== 'c'), "c's streams to move by themselves");
  await c.run(1_000);
  const failovers = c.consensus.log().filter((e) => e.command.type === 'failover');
  t.is(failovers.length, 1, 'failed over once');
  t.like(failovers[0].result, { ok: true, moved: 2, remaining: 0 });

  c.renew('c');
  await c.until(() => c.liveness('c') === 'Alive', 'c to be published Alive again');
  const changes = c.consensus.log().filter((e) => e.command.type === 'node-liveness').map((e) => (e.command as { liveness: string }).liveness);
  t.deepEqual(changes, ['Suspect', 'Dead', 'Alive'], 'one command per change');
  c.observer.stop();
  for (const lease of c.leases.values()) lease.stop();
});

test('an observer that cannot read the store judges no one, and counts afresh once it can', async (t) => {
  const c = await cluster();
  for (const node of ['a', 'b', 'c']) c.renew(node);
  c.observer.start();
  await c.run(500);
  c.store.failWith(new StoreUnavailableError('memory', 'outage'));
  await c.run(OPTIONS.deadAfterMs * 2);
  c.store.failWith(undefined);
  await c.run(200);
  t.deepEqual(['a', 'b', 'c'].map(c.liveness), ['Alive', 'Alive', 'Alive']);
  t.is(c.consensus.log().filter((e) => e.command.type !== 'register-node' && e.command.type !== 'create-stream').length, 0);
  c.observer.stop();
  for (const lease of c.leases.values()) lease.stop();
});

test('with automatic failover off, or on a store without conditional puts, a Dead node keeps its streams until an operator acts', async (t) => {
  for (const variant of ['off', 'no-conditional-put'] as const) {
    const c = await cluster({ ...OPTIONS, autoFailoverAfterMs: variant === 'off' ? null : 200 });
    if (variant === 'no-conditional-put') (c.store.supports as { conditionalPut: boolean }).conditionalPut = false;
    c.renew('a');
    c.renew('b');
    c.observer.start();
    await c.until(() => c.liveness('c') === 'Dead', 'c to be published Dead');
    await c.run(OPTIONS.autoFailoverAfterMs === null ? 1_000 : OPTIONS.autoFailoverAfterMs * 5);
    t.is(c.consensus.view().state.stream('s1')!.owner, 'c', variant);
    c.observer.stop();
    for (const lease of c.leases.values()) lease.stop();
  }
});

test('a node that lost the metadata leader stops renewing and is declared Dead, though it still runs', async (t) => {
  const c = await cluster();
  for (const node of ['a', 'b', 'c']) c.renew(node);
  c.observer.start();
  await c.run(500);
  // c's own consensus no longer knows a leader (cut off from the metadata); a and b still do.
  c.leases.get('c')!.stop();
  const cutOff = new Proxy(c.consensus, {
    get: (target, property, receiver) =>
      property === 'leadership' ? () => ({ self: 'c', isLeader: false, term: 1 }) : Reflect.get(target, property, receiver),
  });
  const lease = new NodeLease({ self: 'c', boot: 'cut', consensus: cutOff, store: c.store, clock: c.clock, logger: createSilentLogger(), renewEveryMs: OPTIONS.renewEveryMs });
  lease.start();
  await c.until(() => c.liveness('c') === 'Dead', 'c to be published Dead');
  t.is(c.liveness('b'), 'Alive');
  lease.stop();
  c.observer.stop();
  for (const l of c.leases.values()) l.stop();
});

test("a node's lease bounds its acknowledgements: none once it has not renewed for the Dead threshold less one renewal period, again after a renewal", async (t) => {
  const c = await cluster();
  const lease = new NodeLease({ self: 'b', boot: 'bounded', consensus: c.consensus, store: c.store, clock: c.clock, logger: createSilentLogger(), renewEveryMs: OPTIONS.renewEveryMs, deadAfterMs: OPTIONS.deadAfterMs });
  lease.start();
  await c.run(300);
  t.true(lease.acknowledgeable(), 'renewing: acknowledgements allowed');
  // The store refuses renewals (as for a node whose renewals cannot get through): the lease runs out.
  c.store.failWith(new StoreUnavailableError('memory', 'down'));
  await c.run(OPTIONS.deadAfterMs - OPTIONS.renewEveryMs - 120);
  t.true(lease.acknowledgeable(), 'still inside the bound');
  await c.run(200);
  t.false(lease.acknowledgeable(), 'past the bound the observer may have declared it Dead');
  c.store.failWith(undefined);
  await c.until(() => lease.acknowledgeable(), 'the next renewal to restore the lease');
  lease.stop();
});

test('a lease held again after a lapse does not cover what was accepted before it: a write that straddled the lapse is never acknowledged', async (t) => {
  const c = await cluster();
  const lease = new NodeLease({ self: 'b', boot: 'straddled', consensus: c.consensus, store: c.store, clock: c.clock, logger: createSilentLogger(), renewEveryMs: OPTIONS.renewEveryMs, deadAfterMs: OPTIONS.deadAfterMs });
  lease.start();
  await c.run(300);
  const acceptedBeforeLapse = c.clock.now();
  t.true(lease.acknowledgeable(acceptedBeforeLapse), 'held since it was accepted');
  // Renewals stop getting through past the bound (as for a paused process), then resume.
  c.store.failWith(new StoreUnavailableError('memory', 'down'));
  await c.run(OPTIONS.deadAfterMs + 200);
  c.store.failWith(undefined);
  await c.until(() => lease.acknowledgeable(), 'the next renewal to restore the lease');
  t.false(lease.acknowledgeable(acceptedBeforeLapse), 'accepted before the lapse: a failover may have come between');
  t.true(lease.acknowledgeable(c.clock.now()), 'accepted after the renewal: held throughout');
  lease.stop();
});

test('a session whose lease lapsed while its segment was being stored acknowledges nothing; the retry of the same producer sequence gets the stored offsets', async (t) => {
  const clock = new VirtualClock();
  const store = new MemoryObjectStore();
  const wal = new DiskWal(new MemoryWalDisk());
  let leaseHeld = true;
  const deps = { wal, store, clock, logger: createSilentLogger(), node: 'a', acknowledgeable: () => leaseHeld };
  const session = await StreamSession.open('s', 1, 0, {}, deps, { maxBufferedBytes: 1 << 20, maxSegmentRecords: 100, maxProducers: 10 });
  t.like(await session.append(['one'], { id: 'p', seq: 0 }), { first: 0, duplicate: false });
  // The process is frozen between storing the segment and answering: its lease runs out meanwhile.
  const put = store.put.bind(store);
  store.put = async (key, bytes, options) => {
    await put(key, bytes, options);
    leaseHeld = false;
  };
  await t.throwsAsync(session.append(['two'], { id: 'p', seq: 1 }), { instanceOf: AppendUnavailableError, message: /lease lapsed/ });
  t.deepEqual((await new SegmentReader(store).read('s', 0, 10)).map((r) => r.body), ['one', 'two'], 'stored, below any fence a takeover writes next');
  await t.throwsAsync(session.append(['two'], { id: 'p', seq: 1 }), { instanceOf: AppendUnavailableError }, 'not even a duplicate is answered while lapsed');
  leaseHeld = true;
  t.like(await session.append(['two'], { id: 'p', seq: 1 }), { first: 1, duplicate: true });
});
