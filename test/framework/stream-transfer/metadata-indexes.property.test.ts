import test from 'ava';
import fc from 'fast-check';
import type { StreamCommand } from '@baton/stream-transfer/internal/commands.js';
import type { NodeId, NodeRecord, PlannedMove, StreamId, StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { planRebalance } from '@baton/stream-transfer/internal/placement.js';
import { rebalancePage, type QueuedMove } from '@baton/stream-transfer/internal/rebalance-listing.js';
import { AppliedLog } from './metadata-fixture.js';

// Ids that are Object.prototype members on purpose: they must be ordinary ids everywhere.
const NODE_IDS = ['a', 'b', 'constructor', 'toString', 'valueOf'];
const STREAM_IDS = ['s1', 's2', 's3', 's4', 's5', 's6', 'hasOwnProperty', 'constructor', 'isPrototypeOf', 'toString'];

type Step =
  | { kind: 'register'; node: number; slots: number }
  | { kind: 'create'; stream: number; node?: number }
  | { kind: 'transfer'; stream: number; target: number }
  | { kind: 'settle'; pick: number }
  | { kind: 'close-and-reopen'; pick: number }
  | { kind: 'drain'; node: number; maxInFlight?: number }
  | { kind: 'undrain'; node: number }
  | { kind: 'rebalance'; maxInFlight?: number }
  | { kind: 'snapshot-restore' }
  | { kind: 'capture-assemble' }
  | { kind: 'clone' };

const nodeIndex = fc.nat({ max: NODE_IDS.length - 1 });
const streamIndex = fc.nat({ max: STREAM_IDS.length - 1 });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('register' as const), node: nodeIndex, slots: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ kind: fc.constant('create' as const), stream: streamIndex, node: fc.option(nodeIndex, { nil: undefined }) }),
  fc.record({ kind: fc.constant('transfer' as const), stream: streamIndex, target: nodeIndex }),
  fc.record({ kind: fc.constant('settle' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('settle' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('close-and-reopen' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('drain' as const), node: nodeIndex, maxInFlight: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }) }),
  fc.record({ kind: fc.constant('undrain' as const), node: nodeIndex }),
  fc.record({ kind: fc.constant('rebalance' as const), maxInFlight: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }) }),
  fc.constant({ kind: 'snapshot-restore' as const }),
  fc.constant({ kind: 'capture-assemble' as const }),
  fc.constant({ kind: 'clone' as const }),
);

/** How much of the interesting ground the runs covered, so the property cannot pass vacuously. */
const reached = { completions: 0, drainStarts: 0, rebalanceStarts: 0, restoresMidTransfer: 0 };

function run(log: AppliedLog, s: Step): void {
  const state = log.state;
  const apply = (command: StreamCommand) => void log.apply(command);
  switch (s.kind) {
    case 'register':
      return apply({ type: 'register-node', node: NODE_IDS[s.node], address: `http://${s.node}`, slots: s.slots });
    case 'create':
      return apply({ type: 'create-stream', stream: STREAM_IDS[s.stream], ...(s.node === undefined ? {} : { node: NODE_IDS[s.node] }) });
    case 'transfer':
      return apply({ type: 'transfer', stream: STREAM_IDS[s.stream], target: NODE_IDS[s.target] });
    case 'settle': {
      // What a source's watcher does: close at the current epoch, then complete.
      const pending = [...state.transfers()];
      if (pending.length === 0) return;
      const chosen = pending[s.pick % pending.length];
      log.settle(chosen.stream);
      reached.completions += 1;
      if (chosen.reason === 'drain') reached.drainStarts += 1;
      if (chosen.reason === 'rebalance') reached.rebalanceStarts += 1;
      return;
    }
    case 'close-and-reopen': {
      // What a restarted owner does with a stream it closed without a transfer.
      const streams = [...state.streams()];
      if (streams.length === 0) return;
      const r = streams[s.pick % streams.length];
      apply({ type: 'close', stream: r.id, node: r.owner, epoch: r.epoch, tail: r.tail + 1, producers: {} });
      return apply({ type: 'reopen', stream: r.id, node: r.owner, epoch: r.epoch });
    }
    case 'drain':
      return apply({ type: 'drain', node: NODE_IDS[s.node], ...(s.maxInFlight ? { maxInFlight: s.maxInFlight } : {}) });
    case 'undrain':
      return apply({ type: 'undrain', node: NODE_IDS[s.node] });
    case 'rebalance':
      return apply({ type: 'rebalance', ...(s.maxInFlight ? { maxInFlight: s.maxInFlight } : {}) });
    case 'snapshot-restore':
      if (state.transferCount > 0) reached.restoresMidTransfer += 1;
      log.state = log.machine.restore(JSON.parse(JSON.stringify(log.machine.snapshot(state))));
      return;
    case 'capture-assemble': {
      const assembly = log.machine.assemble();
      for (const piece of log.machine.capture(state).pieces()) assembly.add(JSON.parse(JSON.stringify(piece)));
      log.state = assembly.finish();
      return;
    }
    case 'clone':
      log.state = state.clone();
      return;
  }
}

/** What the indexes must say, counted from the records alone. */
function recount(state: StreamMetadata) {
  const perNode = new Map<NodeId, { idle: StreamId[]; outgoing: StreamId[]; incoming: StreamId[] }>();
  const of = (id: NodeId) => {
    let entry = perNode.get(id);
    if (!entry) perNode.set(id, (entry = { idle: [], outgoing: [], incoming: [] }));
    return entry;
  };
  for (const node of state.nodes()) of(node.id);
  for (const stream of state.streams()) {
    const pending = state.transfer(stream.id);
    (pending ? of(stream.owner).outgoing : of(stream.owner).idle).push(stream.id);
  }
  for (const t of state.transfers()) of(t.target).incoming.push(t.stream);
  const load = (id: NodeId) => {
    const e = of(id);
    return e.idle.length + e.outgoing.length + e.incoming.length;
  };
  return { perNode, load };
}

/** The placement rule spelt out over every node: lowest fill ratio, then fewest streams, then id. */
function bestNodeByScan(state: StreamMetadata, load: (id: NodeId) => number, exclude?: NodeId): NodeId | undefined {
  let best: NodeRecord | undefined;
  for (const node of state.nodes()) {
    if (node.draining || node.id === exclude || load(node.id) >= node.slots) continue;
    if (!best) {
      best = node;
      continue;
    }
    const ratio = load(node.id) / node.slots - load(best.id) / best.slots;
    if (ratio < 0 || (ratio === 0 && (load(node.id) < load(best.id) || (load(node.id) === load(best.id) && node.id < best.id)))) best = node;
  }
  return best?.id;
}

/** The rebalance plan by repeated scans (the reference the indexed planner must equal). */
function planByScan(state: StreamMetadata, loadOf: (id: NodeId) => number): PlannedMove[] {
  const load = new Map<NodeId, number>();
  for (const node of state.nodes()) load.set(node.id, loadOf(node.id));
  const movable = new Map<NodeId, StreamId[]>();
  for (const stream of state.streams()) {
    if (state.transfer(stream.id)) continue;
    movable.set(stream.owner, [...(movable.get(stream.owner) ?? []), stream.id]);
  }
  const active = [...state.nodes()].filter((n) => !n.draining);
  const moves: PlannedMove[] = [];
  for (;;) {
    let from: NodeRecord | undefined;
    for (const node of active) {
      if ((movable.get(node.id)?.length ?? 0) === 0) continue;
      if (!from || load.get(node.id)! > load.get(from.id)!) from = node;
    }
    if (!from) break;
    let to: NodeRecord | undefined;
    for (const node of active) {
      if (node.id === from.id || load.get(node.id)! >= node.slots) continue;
      if (!to || load.get(node.id)! < load.get(to.id)!) to = node;
    }
    if (!to || load.get(from.id)! - load.get(to.id)! <= 1) break;
    moves.push({ stream: movable.get(from.id)!.shift()!, target: to.id });
    load.set(from.id, load.get(from.id)! - 1);
    load.set(to.id, load.get(to.id)! + 1);
  }
  return moves;
}

function checkIndexes(state: StreamMetadata): string | undefined {
  const { perNode, load } = recount(state);
  for (const [id, expected] of perNode) {
    const idle = [...state.idleStreamsOf(id)];
    const outgoing = [...state.transfersFrom(id)].map((t) => t.stream);
    const incoming = [...state.transfersTo(id)].map((t) => t.stream);
    const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
    if (!same(idle, expected.idle)) return `idle streams of ${id}: ${idle} != ${expected.idle}`;
    if (!same(outgoing, expected.outgoing)) return `outgoing of ${id}: ${outgoing} != ${expected.outgoing}`;
    if (!same(incoming, expected.incoming)) return `incoming of ${id}: ${incoming} != ${expected.incoming}`;
    if (state.ownedCount(id) !== expected.idle.length + expected.outgoing.length) return `owned count of ${id}`;
    if (state.idleCount(id) !== expected.idle.length) return `idle count of ${id}`;
    if (state.incomingCount(id) !== expected.incoming.length) return `incoming count of ${id}`;
    if (state.outgoingCount(id) !== expected.outgoing.length) return `outgoing count of ${id}`;
    if (state.load(id) !== load(id)) return `load of ${id}: ${state.load(id)} != ${load(id)}`;
    const owned = [...state.streamsOwnedBy(id)].map((s) => s.id).sort();
    if (!same(owned, [...expected.idle, ...expected.outgoing].sort())) return `streams owned by ${id}`;
  }
  for (const exclude of [undefined, ...NODE_IDS]) {
    const indexed = state.leastLoadedNode(exclude)?.id;
    const scanned = bestNodeByScan(state, load, exclude);
    if (indexed !== scanned) return `least loaded node (excluding ${exclude}): ${indexed} != ${scanned}`;
  }
  const ready: NodeId[] = [];
  for (let id = state.nextDrainReady(); id !== undefined; id = state.nextDrainReady(id)) ready.push(id);
  const expectedReady = [...state.nodes()]
    .filter((n) => n.draining && perNode.get(n.id)!.idle.length > 0 && perNode.get(n.id)!.outgoing.length < n.drainInFlight)
    .map((n) => n.id);
  if (ready.join() !== expectedReady.join()) return `drain queue: ${ready} != ${expectedReady}`;
  const rebalancing = [...state.transfers()].filter((t) => t.reason === 'rebalance').length;
  if (state.rebalancesInFlight !== rebalancing) return `rebalances in flight: ${state.rebalancesInFlight} != ${rebalancing}`;
  if (state.streamCount !== [...state.streams()].length) return 'stream count';
  if (state.transferCount !== [...state.transfers()].length) return 'transfer count';
  const bySince = [...state.transfersBySince()].map((t) => t.stream).join();
  const sorted = [...state.transfers()]
    .sort((a, b) => a.since - b.since || (a.stream < b.stream ? -1 : 1))
    .map((t) => t.stream)
    .join();
  if (bySince !== sorted) return `transfers oldest first: ${bySince} != ${sorted}`;
  const plan = JSON.stringify(planRebalance(state));
  const reference = JSON.stringify(planByScan(state, load));
  if (plan !== reference) return `rebalance plan ${plan} != ${reference}`;
  return undefined;
}

test('the incremental indexes always equal a full recount, across snapshots, restores and clones', (t) => {
  let checked = 0;
  const property = fc.property(fc.array(step, { minLength: 1, maxLength: 120, size: 'max' }), (steps) => {
    const log = new AppliedLog();
    for (const s of steps) {
      run(log, s);
      const problem = checkIndexes(log.state);
      if (problem) throw new Error(`after ${JSON.stringify(s)}: ${problem}`);
      checked += 1;
    }
  });
  // A mismatch fails with the shrunk sequence of steps and the seed that replays it.
  t.notThrows(() => fc.assert(property, { numRuns: 300 }));
  t.true(checked > 3000, 'the indexes were compared after every step of every run');
  for (const [what, count] of Object.entries(reached)) t.true(count > 0, `the runs reached ${what}`);
});

test('a clone is independent: changes to one never show in the other', (t) => {
  const log = new AppliedLog().nodes(['constructor', 3], ['toString', 3]);
  log.must({ type: 'create-stream', stream: 'hasOwnProperty', node: 'constructor' });
  const frozen = log.state.clone();
  log.must({ type: 'transfer', stream: 'hasOwnProperty', target: 'toString' });
  log.settle('hasOwnProperty');
  log.must({ type: 'create-stream', stream: 'valueOf' });
  t.like(frozen.stream('hasOwnProperty'), { owner: 'constructor', epoch: 1 });
  t.is(frozen.stream('valueOf'), undefined);
  t.is(frozen.load('toString'), 0);
  t.like(log.state.stream('hasOwnProperty'), { owner: 'toString', epoch: 2 });
  t.is(checkIndexes(frozen), undefined);
  t.is(checkIndexes(log.state), undefined);
});

test('ids named like Object.prototype members are ordinary streams and nodes', (t) => {
  const log = new AppliedLog();
  t.is(log.state.node('constructor'), undefined, 'nothing is registered yet');
  t.is(log.state.stream('toString'), undefined);
  t.like(log.apply({ type: 'create-stream', stream: 'toString' }), { ok: false, reason: 'no_free_slots' });
  log.nodes(['constructor', 2], ['valueOf', 2]);
  for (const stream of ['toString', 'hasOwnProperty', 'valueOf', 'constructor']) log.must({ type: 'create-stream', stream });
  t.like(log.apply({ type: 'transfer', stream: 'isPrototypeOf', target: 'valueOf' }), { ok: false, reason: 'unknown_stream' });
  t.like(log.apply({ type: 'drain', node: 'hasOwnProperty' }), { ok: false, reason: 'unknown_node' });
  t.is(log.state.streamCount, 4);
  t.deepEqual([...log.state.streams()].map((s) => s.id), ['constructor', 'hasOwnProperty', 'toString', 'valueOf']);
  const restored = log.machine.restore(JSON.parse(JSON.stringify(log.machine.snapshot(log.state))));
  t.deepEqual(restored.toSnapshot(), log.state.toSnapshot());
  t.is(restored.load('constructor') + restored.load('valueOf'), 4);
});

test('a capture is frozen when taken and assembles, piece by piece, into the same state', (t) => {
  const log = new AppliedLog().nodes(['a', 5_000], ['b', 5_000], ['c', 5_000]);
  for (let i = 0; i < 2_500; i += 1) log.must({ type: 'create-stream', stream: `s${i}`, node: 'a' });
  log.must({ type: 'rebalance', maxInFlight: 10 });
  const before = structuredClone(log.state.toSnapshot());
  const capture = log.machine.capture(log.state);
  // Changes after the capture must not show in it.
  log.settle([...log.state.transfers()][0].stream);
  log.must({ type: 'create-stream', stream: 'later' });
  const pieces = [...capture.pieces()];
  t.true(pieces.length > 3, 'the streams travel in several pieces');
  for (const piece of pieces) t.true(JSON.stringify(piece).length < 256 * 1024, 'each piece is small');
  const assembly = log.machine.assemble();
  for (const piece of pieces) assembly.add(JSON.parse(JSON.stringify(piece)));
  const rebuilt = assembly.finish();
  t.deepEqual(rebuilt.toSnapshot(), before);
  t.is(checkIndexes(rebuilt), undefined);
  t.like(rebuilt.rebalance, { planned: before.rebalance!.planned, started: 10 });
  t.is(rebuilt.rebalance!.queue.length, before.rebalance!.queue.length);
  t.throws(() => log.machine.assemble().add({ kind: 'streams', records: [] }), { message: /malformed/ });
});

test('the rebalance queue reads in pages by plan position, each waiting move once, before and after moves are taken', (t) => {
  const log = new AppliedLog().nodes(['a', 400], ['b', 400], ['c', 400]);
  for (let i = 0; i < 300; i += 1) log.must({ type: 'create-stream', stream: `s${i}`, node: 'a' });
  log.must({ type: 'rebalance', maxInFlight: 3 });
  const readAll = (state: typeof log.state, limit: number) => {
    const seen: QueuedMove[] = [];
    let after: string | undefined;
    for (;;) {
      const page = rebalancePage(state, after, limit);
      t.true(page.queue.length <= limit);
      seen.push(...page.queue);
      if (page.next === null) return { seen, page };
      after = page.next;
    }
  };
  const first = readAll(log.state, 70);
  t.is(first.page.planned, 200);
  t.is(first.seen.length, 197, 'three moves started, the rest wait');
  t.is(first.page.waiting, 197);
  t.deepEqual(first.seen.map((m) => m.stream), log.state.rebalance!.queue.map((m) => m.stream));
  t.deepEqual(first.seen.map((m) => m.position), Array.from({ length: 197 }, (_, i) => i + 3));
  // Moves taken between two pages do not repeat or skip one of those still waiting.
  const page1 = rebalancePage(log.state, undefined, 10);
  for (const transfer of [...log.state.transfers()]) log.settle(transfer.stream);
  const page2 = rebalancePage(log.state, page1.next!, 10);
  t.is(page2.queue[0].position, page1.queue[9].position + 1);
  t.is(page2.waiting, 194);
  const restored = log.machine.assemble();
  for (const piece of log.machine.capture(log.state).pieces()) restored.add(JSON.parse(JSON.stringify(piece)));
  t.deepEqual(readAll(restored.finish(), 1_000).seen, readAll(log.state, 1_000).seen, 'positions survive a snapshot');
  t.deepEqual(rebalancePage(new AppliedLog().state, undefined, 10), { planned: 0, started: 0, skipped: 0, maxInFlight: 0, waiting: 0, queue: [], next: null });
});
