import test from 'ava';
import fc from 'fast-check';
import { labelOf } from '@baton/stream-transfer/internal/labels.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { planView } from '@baton/stream-transfer/internal/plan-view.js';
import { DEFAULT_DRAIN_IN_FLIGHT } from '@baton/stream-transfer/internal/drain-defaults.js';
import { AppliedLog } from './metadata-fixture.js';

/** n1 holds `streams` streams; n2..n(nodes) are empty; each node has `slots`. */
function unevenLog(nodes: number, streams: number, slots = 100): AppliedLog {
  const log = new AppliedLog();
  log.must({ type: 'register-node', node: 'n1', address: 'http://n1', slots });
  for (let i = 0; i < streams; i++) log.must({ type: 'create-stream', stream: `s${String(i).padStart(3, '0')}`, node: 'n1' });
  for (let i = 2; i <= nodes; i++) log.must({ type: 'register-node', node: `n${i}`, address: `http://n${i}`, slots, labels: { zone: `z${i % 2}` } });
  return log;
}

function created(log: AppliedLog, command: Parameters<AppliedLog['must']>[0]): string {
  const result = log.must(command);
  if (!result.ok || !result.plan) throw new Error('no plan id');
  return result.plan;
}

const plan = (log: AppliedLog, id: string) => log.state.plans.get(id)!;
const settleAll = (log: AppliedLog) => {
  for (const transfer of [...log.state.transfers()]) log.settle(transfer.stream);
};

test('a plan is computed and kept with its moves and predicted effect, and moves nothing', (t) => {
  const log = unevenLog(3, 12);
  const id = created(log, { type: 'create-plan', goal: { type: 'rebalance' }, limits: { maxConcurrent: 2 } });
  t.regex(id, /^plan-\d+$/);
  t.is(log.state.transferCount, 0);
  const view = planView(log.state, plan(log, id));
  t.like(view, { status: 'planned', planned: 8, stale: false, limits: { maxConcurrent: 2, movesPerSecond: null } });
  t.deepEqual(
    view.effect.byNode.map((n) => [n.node, n.before, n.after]),
    [
      ['n1', 12, 4],
      ['n2', 0, 4],
      ['n3', 0, 4],
    ],
  );
  // Per label value: n2 carries zone z0, n3 zone z1.
  t.deepEqual(
    view.effect.byLabel.map((l) => [l.label, l.value, l.before, l.after]),
    [
      ['zone', 'z0', 0, 4],
      ['zone', 'z1', 0, 4],
    ],
  );
  t.is(view.moves.length, 8);
  t.true(view.moves.every((m) => m.source === 'n1'));
});

test('execute runs the plan within maxConcurrent; a lowered limit starts nothing until the plan is below it; it completes', (t) => {
  const log = unevenLog(3, 12);
  const id = created(log, { type: 'create-plan', goal: { type: 'rebalance' }, limits: { maxConcurrent: 3 } });
  const executed = log.must({ type: 'execute-plan', plan: id });
  t.is(executed.ok && executed.started?.length, 3);
  t.is(plan(log, id).status, 'running');
  t.like(log.apply({ type: 'execute-plan', plan: id }), { ok: true, duplicate: true });
  log.must({ type: 'set-plan-limits', plan: id, maxConcurrent: 1 });
  const inFlight: number[] = [];
  while (log.state.transferCount > 0) {
    const [first] = [...log.state.transfers()];
    log.settle(first!.stream);
    inFlight.push(log.state.transferCount);
  }
  // The two moves above the new bound finish one by one with none started meanwhile; then one at a time.
  t.deepEqual(inFlight.slice(0, 2), [2, 1]);
  t.true(inFlight.slice(1).every((n) => n <= 1));
  t.like(plan(log, id), { status: 'completed', tallies: { started: 8, skipped: 0, dropped: 0 } });
  t.deepEqual([...log.state.nodes()].map((n) => log.state.ownedCount(n.id)), [4, 4, 4]);
});

test('a plan built on a view that changed is refused at execute with plan_stale naming both views', (t) => {
  const log = unevenLog(3, 6);
  const id = created(log, { type: 'create-plan', goal: { type: 'rebalance' }, limits: { maxConcurrent: 2 } });
  const view = plan(log, id).createdAt;
  log.must({ type: 'create-stream', stream: 'late', node: 'n1' });
  t.true(planView(log.state, plan(log, id)).stale);
  t.like(log.apply({ type: 'execute-plan', plan: id }), { ok: false, reason: 'plan_stale', current: { plan: id, plan_view: view, current_view: log.state.viewAt } });
  t.true(log.state.viewAt > view);
  t.is(log.state.transferCount, 0);
});

test('one plan runs at a time, and a rebalance waits for it', (t) => {
  const log = unevenLog(3, 12);
  const first = created(log, { type: 'create-plan', goal: { type: 'rebalance' }, limits: { maxConcurrent: 1 } });
  const second = created(log, { type: 'create-plan', goal: { type: 'rebalance' }, limits: { maxConcurrent: 1 } });
  log.must({ type: 'execute-plan', plan: first });
  t.like(log.apply({ type: 'execute-plan', plan: second }), { ok: false, reason: 'plan_running' });
  t.like(log.apply({ type: 'rebalance' }), { ok: false, reason: 'plan_running' });
  t.like(log.apply({ type: 'execute-plan', plan: 'plan-999' }), { ok: false, reason: 'unknown_plan' });
  while (log.state.transferCount > 0) settleAll(log);
  t.is(plan(log, first).status, 'completed');
  t.like(log.apply({ type: 'rebalance' }), { ok: true }, 'a rebalance is accepted once the plan ended');
});

test('a completed drain plan hands what it could not move to its nodes\' own drain; a cancelled one leaves them to a drain asked for later', (t) => {
  const log = new AppliedLog();
  log.must({ type: 'register-node', node: 'a', address: 'http://a', slots: 10, labels: { zone: 'z1' } });
  log.must({ type: 'register-node', node: 'b', address: 'http://b', slots: 10, labels: { zone: 'z2' } });
  log.must({ type: 'create-stream', stream: 'pinned', node: 'a', placement: { require: { zone: 'z1' } } });
  log.must({ type: 'create-stream', stream: 'free', node: 'a' });
  const id = created(log, { type: 'create-plan', goal: { type: 'drain', nodes: ['a'] }, limits: { maxConcurrent: 4 } });
  log.must({ type: 'execute-plan', plan: id });
  settleAll(log);
  t.is(plan(log, id).status, 'completed');
  t.like(log.state.node('a'), { draining: true, drainInFlight: DEFAULT_DRAIN_IN_FLIGHT });
  t.is(log.state.stream('pinned')!.owner, 'a', 'no node of z1 yet');
  // A node of z1 arrives: the drain the plan handed over moves the pinned stream there.
  log.must({ type: 'register-node', node: 'c', address: 'http://c', slots: 10, labels: { zone: 'z1' } });
  t.is(log.state.transfer('pinned')?.target, 'c');
  settleAll(log);
  t.is(log.state.ownedCount('a'), 0);

  const other = new AppliedLog();
  other.nodes(['x', 10], ['y', 10]);
  for (let i = 0; i < 4; i++) other.must({ type: 'create-stream', stream: `s${i}`, node: 'x' });
  const stopped = created(other, { type: 'create-plan', goal: { type: 'drain', nodes: ['x'] }, limits: { maxConcurrent: 1 } });
  other.must({ type: 'execute-plan', plan: stopped });
  other.must({ type: 'cancel-plan', plan: stopped });
  settleAll(other);
  t.is(other.state.ownedCount('x'), 3, 'cancelled: nothing more moves');
  t.like(other.state.node('x'), { draining: true, drainInFlight: 0 });
  const drained = other.apply({ type: 'drain', node: 'x' });
  t.true(drained.ok && !drained.duplicate, 'a drain asked for now is no duplicate');
  t.is(other.state.transferCount, 3, 'it moves the rest at the default bound');
});

test('a failover that only cancels a plan\'s moves in flight lets the plan move on and end', (t) => {
  const log = unevenLog(3, 4);
  const id = created(log, { type: 'create-plan', goal: { type: 'rebalance' }, limits: { maxConcurrent: 4 } });
  log.must({ type: 'execute-plan', plan: id });
  const towardsN2 = [...log.state.transfers()].filter((tr) => tr.target === 'n2').length;
  t.true(towardsN2 > 0);
  const failed = log.must({ type: 'failover', node: 'n2', force: true });
  t.false(failed.ok && failed.duplicate === true, 'cancelling transfers is a change');
  settleAll(log);
  t.is(log.state.transferCount, 0);
  t.is(plan(log, id).status, 'completed');
});

test('maintenance hand-backs are no plan moves: they neither count against maxConcurrent nor keep a plan running', (t) => {
  const log = unevenLog(3, 6);
  // A hand-back in flight, as the maintenance scheduler proposes it.
  log.must({ type: 'transfer', stream: 's000', target: 'n2', reason: 'maintenance' });
  const id = created(log, { type: 'create-plan', goal: { type: 'drain', nodes: ['n3'] }, limits: { maxConcurrent: 1 } });
  const executed = log.must({ type: 'execute-plan', plan: id });
  t.like(executed, { ok: true });
  t.is(plan(log, id).status, 'completed', 'nothing to move: it ends at once, the hand-back notwithstanding');
  t.is(log.state.rebalancesInFlight, 0);
  t.like(planView(log.state, plan(log, id)).progress, { done: 0, inFlight: 0 });
});

test('cancel stops a running plan after the moves in flight: the waiting ones are dropped and counted', (t) => {
  const log = unevenLog(3, 12);
  const id = created(log, { type: 'create-plan', goal: { type: 'rebalance' }, limits: { maxConcurrent: 2 } });
  log.must({ type: 'execute-plan', plan: id });
  log.must({ type: 'cancel-plan', plan: id });
  t.like(plan(log, id), { status: 'cancelled', tallies: { started: 2, dropped: 6 } });
  t.is(planView(log.state, plan(log, id)).progress.inFlight, 2);
  settleAll(log);
  t.is(log.state.transferCount, 0, 'nothing more starts');
  t.is(planView(log.state, plan(log, id)).progress.done, 2);
  t.like(log.apply({ type: 'cancel-plan', plan: id }), { ok: true, duplicate: true });
  t.like(log.apply({ type: 'execute-plan', plan: id }), { ok: false, reason: 'plan_ended' });
  t.like(log.apply({ type: 'set-plan-limits', plan: id, maxConcurrent: 4 }), { ok: false, reason: 'plan_ended' });
});

test('a paced plan starts moves only as the pacer allows, at most a second of pace held unused', (t) => {
  const log = unevenLog(3, 12);
  const id = created(log, { type: 'create-plan', goal: { type: 'rebalance' }, limits: { maxConcurrent: 8, movesPerSecond: 2 } });
  const executed = log.must({ type: 'execute-plan', plan: id });
  t.false(executed.ok && !!executed.started, 'nothing starts before the pacer allows it');
  log.must({ type: 'allow-plan-moves', plan: id, moves: 1 });
  t.is(log.state.transferCount, 1);
  // 5 allowed at once is capped to a second's worth (2).
  log.must({ type: 'allow-plan-moves', plan: id, moves: 5 });
  t.is(log.state.transferCount, 3);
  log.must({ type: 'set-plan-limits', plan: id, movesPerSecond: null });
  t.is(log.state.transferCount, 8, 'unpaced, it fills maxConcurrent');
});

test('a drain plan empties its nodes onto the others, marks them draining, and respects required labels', (t) => {
  const log = new AppliedLog();
  for (const [node, zone] of [['a', 'z1'], ['b', 'z1'], ['c', 'z2'], ['d', 'z2']] as const) {
    log.must({ type: 'register-node', node, address: `http://${node}`, slots: 10, labels: { zone } });
  }
  for (let i = 0; i < 6; i++) log.must({ type: 'create-stream', stream: `p${i}`, node: 'a', placement: { require: { zone: 'z1' } } });
  for (let i = 0; i < 4; i++) log.must({ type: 'create-stream', stream: `f${i}`, node: 'a' });
  const id = created(log, { type: 'create-plan', goal: { type: 'drain', nodes: ['a'] }, limits: { maxConcurrent: 4 } });
  const view = planView(log.state, plan(log, id));
  t.is(view.planned, 10);
  t.true(view.moves.filter((m) => m.stream.startsWith('p')).every((m) => m.target === 'b'));
  t.like(view.effect.byNode.find((n) => n.node === 'a'), { before: 10, after: 0 });
  t.like(view.effect.violations, { required: { before: 0, after: 0 } });
  log.must({ type: 'execute-plan', plan: id });
  t.like(log.state.node('a'), { draining: true, drainInFlight: 0 });
  t.like(log.apply({ type: 'create-stream', stream: 'new', node: 'a' }), { ok: false, reason: 'node_draining' });
  settleAll(log);
  while (log.state.transferCount > 0) settleAll(log);
  t.is(log.state.ownedCount('a'), 0);
  t.is(plan(log, id).status, 'completed');
  for (let i = 0; i < 6; i++) t.is(log.state.stream(`p${i}`)!.owner, 'b');
  t.like(log.apply({ type: 'create-plan', goal: { type: 'drain', nodes: ['zz'] }, limits: { maxConcurrent: 1 } }), { ok: false, reason: 'unknown_node' });
});

test('a drain plan names the streams no other node can take, and predicts the violations it leaves', (t) => {
  const log = new AppliedLog();
  log.must({ type: 'register-node', node: 'a', address: 'http://a', slots: 10, labels: { zone: 'z1' } });
  log.must({ type: 'register-node', node: 'b', address: 'http://b', slots: 10, labels: { zone: 'z2' } });
  log.must({ type: 'create-stream', stream: 'pinned', node: 'a', placement: { require: { zone: 'z1' } } });
  log.must({ type: 'create-stream', stream: 'free', node: 'a' });
  const id = created(log, { type: 'create-plan', goal: { type: 'drain', nodes: ['a'] }, limits: { maxConcurrent: 4 } });
  t.like(plan(log, id), { planned: 1, effect: { unplaceable: ['pinned'], unplaceableCount: 1 } });
});

test('restore-preferences moves streams back to the labels they prefer, and only those', (t) => {
  const log = new AppliedLog();
  for (const [node, disk] of [['a', 'hdd'], ['b', 'ssd'], ['c', 'ssd']] as const) {
    log.must({ type: 'register-node', node, address: `http://${node}`, slots: 10, labels: { disk } });
  }
  for (let i = 0; i < 4; i++) log.must({ type: 'create-stream', stream: `want-ssd-${i}`, node: 'a', placement: { prefer: { disk: 'ssd' } } });
  log.must({ type: 'create-stream', stream: 'happy', node: 'b', placement: { prefer: { disk: 'ssd' } } });
  log.must({ type: 'create-stream', stream: 'indifferent', node: 'a' });
  const id = created(log, { type: 'create-plan', goal: { type: 'restore-preferences' }, limits: { maxConcurrent: 10 } });
  const view = planView(log.state, plan(log, id));
  t.is(view.planned, 4);
  t.deepEqual(new Set(view.moves.map((m) => m.stream)), new Set([0, 1, 2, 3].map((i) => `want-ssd-${i}`)));
  t.true(view.moves.every((m) => m.target === 'b' || m.target === 'c'));
  t.deepEqual(view.effect.violations.preferences, { before: 4, after: 0 });
  // Spread over the two ssd nodes by load: b has one already.
  // The least filled ssd node first each time: c (empty) and b (one already) end up even.
  t.is(view.moves.filter((m) => m.target === 'c').length, 2);
  t.is(view.moves.filter((m) => m.target === 'b').length, 2);
  log.must({ type: 'execute-plan', plan: id });
  settleAll(log);
  t.is(plan(log, id).status, 'completed');
  for (let i = 0; i < 4; i++) t.is(labelOf(log.state.node(log.state.stream(`want-ssd-${i}`)!.owner)!.labels, 'disk'), 'ssd');
  t.is(log.state.stream('indifferent')!.owner, 'a');
});

/** The violation counts by walking every stream: what the kept index must always equal. */
function recount(state: StreamMetadata): [number, number] {
  let required = 0;
  let preferences = 0;
  for (const stream of state.streams()) {
    const owner = state.node(stream.owner);
    const p = stream.placement;
    if (!owner || !p) continue;
    if (p.require && Object.entries(p.require).some(([k, v]) => labelOf(owner.labels, k) !== v)) required += 1;
    if (p.prefer && Object.entries(p.prefer).some(([k, v]) => labelOf(owner.labels, k) !== v)) preferences += 1;
  }
  return [required, preferences];
}

test('the metadata keeps the streams whose owner breaks their placement current through relabelling, placement changes, moves and snapshots', (t) => {
  const log = new AppliedLog();
  log.must({ type: 'register-node', node: 'a', address: 'http://a', slots: 10, labels: { disk: 'hdd', zone: 'z1' } });
  log.must({ type: 'register-node', node: 'b', address: 'http://b', slots: 10, labels: { disk: 'ssd', zone: 'z1' } });
  log.must({ type: 'create-stream', stream: 'x', node: 'a', placement: { prefer: { disk: 'ssd' } } });
  log.must({ type: 'create-stream', stream: 'y', node: 'a', placement: { require: { zone: 'z1' } } });
  const counts = (state: StreamMetadata) => {
    const kept = [state.violations.required, state.violations.preferences];
    t.deepEqual(kept, recount(state), 'the kept index equals a recount');
    return kept;
  };
  t.deepEqual(counts(log.state), [0, 1]);
  t.deepEqual([...log.state.violations.unmetPreferences()], ['x']);
  // Relabelled: a's streams are judged anew.
  log.must({ type: 'register-node', node: 'a', address: 'http://a', slots: 10, labels: { disk: 'ssd', zone: 'z2' } });
  t.deepEqual(counts(log.state), [1, 0]);
  log.must({ type: 'set-placement', stream: 'y', placement: {} });
  t.deepEqual(counts(log.state), [0, 0]);
  log.must({ type: 'register-node', node: 'a', address: 'http://a', slots: 10, labels: { disk: 'hdd' } });
  t.deepEqual(counts(log.state), [0, 1]);
  log.must({ type: 'transfer', stream: 'x', target: 'b' });
  log.settle('x');
  t.deepEqual(counts(log.state), [0, 0], 'moved to a node it prefers');
  log.must({ type: 'set-placement', stream: 'x', placement: { prefer: { disk: 'nvme' } } });
  log.must({ type: 'set-placement', stream: 'y', placement: { require: { zone: 'z9' } } });
  t.deepEqual(counts(log.state), [1, 1]);
  const machine = new StreamStateMachine();
  const restored = machine.restore(JSON.parse(JSON.stringify(machine.snapshot(log.state)))) as StreamMetadata;
  t.deepEqual(counts(restored), [1, 1]);
  const assembly = machine.assemble();
  for (const piece of machine.capture(log.state).pieces()) assembly.add(JSON.parse(JSON.stringify(piece)));
  t.deepEqual(counts(assembly.finish()), [1, 1]);
});

test('plans and their runs are carried by snapshots and captures, so a restored member decides the same', (t) => {
  const log = unevenLog(3, 12);
  const paced = created(log, { type: 'create-plan', goal: { type: 'rebalance' }, limits: { maxConcurrent: 3, movesPerSecond: 2 } });
  log.must({ type: 'execute-plan', plan: paced });
  log.must({ type: 'allow-plan-moves', plan: paced, moves: 1 });
  const waiting = created(log, { type: 'create-plan', goal: { type: 'drain', nodes: ['n1'] }, limits: { maxConcurrent: 2 } });
  t.true(plan(log, waiting).planned > 0);
  const machine = new StreamStateMachine();
  const copies = (): StreamMetadata[] => {
    const restored = machine.restore(JSON.parse(JSON.stringify(machine.snapshot(log.state)))) as StreamMetadata;
    const assembly = machine.assemble();
    // Every piece through JSON, as it crosses the network; the waiting plan's moves travel in pieces of their own.
    const pieces = [...machine.capture(log.state).pieces()].map((piece) => JSON.parse(JSON.stringify(piece)));
    t.true(pieces.some((piece) => piece.kind === 'planMoves'));
    t.true(pieces.filter((piece) => piece.kind === 'head').every((head) => head.plans.every((p: { moves?: unknown[] }) => (p.moves ?? []).length === 0)));
    for (const piece of pieces) assembly.add(piece);
    return [restored, assembly.finish()];
  };
  for (const copy of copies()) {
    t.is(copy.viewAt, log.state.viewAt);
    t.deepEqual(copy.plans.records(), log.state.plans.records());
    t.deepEqual(copy.rebalanceParts()?.tallies, log.state.rebalanceParts()?.tallies);
  }
  // The same commands on the original and on each copy: the same answers, the same state.
  const commands = (): Parameters<AppliedLog['apply']>[0][] => [
    { type: 'execute-plan', plan: waiting },
    { type: 'cancel-plan', plan: paced },
    { type: 'allow-plan-moves', plan: paced, moves: 2 },
    { type: 'execute-plan', plan: waiting },
    { type: 'create-plan', goal: { type: 'restore-preferences' }, limits: { maxConcurrent: 1 } },
  ];
  const replicas = [log.state, ...copies()];
  const answers = replicas.map((state, r) =>
    commands().map((command, i) => {
      const { planView: _view, ...result } = machine.apply(state, command, { position: { term: 1, index: 1_000 + i }, voters: ['m1'] }) as { planView?: unknown };
      return { r, ...result };
    }),
  );
  for (const [r, replica] of answers.entries()) t.deepEqual(replica.map(({ r: _r, ...a }) => a), answers[0]!.map(({ r: _r, ...a }) => a), `replica ${r}`);
  for (const state of replicas.slice(1)) t.deepEqual(JSON.parse(JSON.stringify(machine.snapshot(state))), JSON.parse(JSON.stringify(machine.snapshot(replicas[0]!))));
});

test('at most MAX_WAITING_PLANS plans wait with their moves; older ones are forgotten', (t) => {
  const log = unevenLog(2, 4);
  const ids = Array.from({ length: 6 }, () => created(log, { type: 'create-plan', goal: { type: 'rebalance' }, limits: { maxConcurrent: 1 } }));
  t.deepEqual(log.state.plans.list().map((p) => p.id), ids.slice(2).reverse());
});

test('property: an executed plan never puts a stream outside its required labels, and a rebalance moves at most the minimum plus one move per node', (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 2, max: 6 }),
      fc.array(fc.record({ pinned: fc.boolean(), zone: fc.integer({ min: 0, max: 2 }) }), { minLength: 1, maxLength: 40 }),
      fc.constantFrom('rebalance', 'drain', 'restore-preferences'),
      (nodes, streams, goal) => {
        const log = new AppliedLog();
        for (let i = 0; i < nodes; i++) log.must({ type: 'register-node', node: `n${i}`, address: `http://n${i}`, slots: 100, labels: { zone: `z${i % 3}` } });
        streams.forEach((s, i) => {
          const zone = `z${s.zone % Math.min(3, nodes)}`;
          const placement = s.pinned ? { require: { zone } } : { prefer: { zone } };
          const node = [...log.state.nodes()].find((n) => labelOf(n.labels, 'zone') === zone)!.id;
          log.must({ type: 'create-stream', stream: `s${i}`, node, placement });
        });
        const goalSpec = goal === 'drain' ? { type: 'drain' as const, nodes: ['n0'] } : { type: goal };
        const id = created(log, { type: 'create-plan', goal: goalSpec, limits: { maxConcurrent: 3 } });
        const planned = plan(log, id).planned;
        if (goal === 'rebalance') {
          // The minimum a rebalance needs: what lies above the even share on the fullest nodes.
          const loads = [...log.state.nodes()].map((n) => log.state.ownedCount(n.id));
          const even = Math.ceil(streams.length / nodes);
          const minimum = loads.reduce((sum, load) => sum + Math.max(0, load - even), 0);
          if (planned > minimum + nodes) return false;
        }
        log.must({ type: 'execute-plan', plan: id });
        for (let round = 0; round < 100 && log.state.transferCount > 0; round++) settleAll(log);
        if (plan(log, id).status !== 'completed') return false;
        for (const stream of log.state.streams()) {
          const required = stream.placement?.require?.zone;
          if (required !== undefined && labelOf(log.state.node(stream.owner)!.labels, 'zone') !== required) return false;
        }
        return true;
      },
    ),
    { seed: 28002, numRuns: 200 },
  );
  t.pass('200 scenarios held');
});
