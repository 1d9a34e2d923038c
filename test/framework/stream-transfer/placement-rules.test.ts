import test from 'ava';
import fc from 'fast-check';
import type { StreamPlacement } from '@baton/stream-transfer/internal/labels.js';
import { livenessOf, type StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import { labelOf } from '@baton/stream-transfer/internal/labels.js';
import { AppliedLog } from './metadata-fixture.js';

/** Nodes n1..n(zones×perZone), labelled zone z1..zK in turn, each with `slots`. */
function zonedLog(zones: number, perZone: number, slots: number): AppliedLog {
  const log = new AppliedLog();
  for (let i = 0; i < zones * perZone; i++) {
    log.must({ type: 'register-node', node: `n${i + 1}`, address: `http://n${i + 1}`, slots, labels: { zone: `z${(i % zones) + 1}`, disk: i % 2 === 0 ? 'ssd' : 'hdd' } });
  }
  return log;
}

/** How many streams of `group` each zone holds (where they are owned). */
function zoneShares(state: StreamMetadata, group: string): Map<string, number> {
  const shares = new Map<string, number>();
  for (const node of state.nodes()) {
    const zone = labelOf(node.labels, 'zone')!;
    shares.set(zone, (shares.get(zone) ?? 0) + [...state.streamsOwnedBy(node.id)].filter((s) => s.placement?.spread?.group === group).length);
  }
  return shares;
}

const spreadOf = (shares: Map<string, number>) => Math.max(...shares.values()) - Math.min(...shares.values());

test('labels are registered with a node, change with its registration, and a registration with other labels is no duplicate', (t) => {
  const log = new AppliedLog();
  log.must({ type: 'register-node', node: 'a', address: 'http://a', slots: 2, labels: { zone: 'z1' } });
  t.deepEqual(log.state.node('a')!.labels, { zone: 'z1' });
  t.like(log.apply({ type: 'register-node', node: 'a', address: 'http://a', slots: 2, labels: { zone: 'z1' } }), { ok: true, duplicate: true });
  t.like(log.apply({ type: 'register-node', node: 'a', address: 'http://a', slots: 2, labels: { zone: 'z2' } }), { ok: true });
  t.false('duplicate' in log.apply({ type: 'register-node', node: 'a', address: 'http://a', slots: 2 }));
  t.is(log.state.node('a')!.labels, undefined);
  t.like(log.apply({ type: 'register-node', node: 'b', address: 'http://b', slots: 1, labels: { Zone: 'z1' } }), { ok: false, reason: 'invalid_command' });
});

test('a stream is created only where its required labels hold; none holding them answers placement_unsatisfiable naming it', (t) => {
  const log = zonedLog(3, 1, 4);
  const placement: StreamPlacement = { require: { zone: 'z2' } };
  t.like(log.apply({ type: 'create-stream', stream: 's1', placement }), { ok: true, node: 'n2' });
  t.deepEqual(log.state.stream('s1')!.placement, placement);
  t.like(log.apply({ type: 'create-stream', stream: 's2', node: 'n1', placement }), { ok: false, reason: 'placement_unsatisfiable', streams: ['s2'] });
  t.like(log.apply({ type: 'create-stream', stream: 's3', placement: { require: { zone: 'z9' } } }), { ok: false, reason: 'placement_unsatisfiable', streams: ['s3'] });
  // The same create again is a retry; with another placement it is a conflict.
  t.like(log.apply({ type: 'create-stream', stream: 's1', placement }), { ok: true, duplicate: true, node: 'n2' });
  t.like(log.apply({ type: 'create-stream', stream: 's1', placement: { require: { zone: 'z3' } } }), { ok: false, reason: 'stream_exists' });
});

test('preferred labels choose among the nodes the requirement allows', (t) => {
  const log = zonedLog(2, 2, 4);
  // n1 z1 ssd, n2 z2 hdd, n3 z1 ssd, n4 z2 hdd
  t.like(log.apply({ type: 'create-stream', stream: 'p1', placement: { prefer: { disk: 'hdd' } } }), { ok: true, node: 'n2' });
  t.like(log.apply({ type: 'create-stream', stream: 'p2', placement: { prefer: { disk: 'hdd' } } }), { ok: true, node: 'n4' });
  t.like(log.apply({ type: 'create-stream', stream: 'p3', placement: { require: { zone: 'z1' }, prefer: { disk: 'hdd' } } }), { ok: true, node: 'n1' });
});

test('a spread group goes round the zones at create, and a transfer that would pile it into one zone is refused', (t) => {
  const log = zonedLog(3, 2, 10);
  for (let i = 0; i < 9; i++) log.must({ type: 'create-stream', stream: `t-${i}`, placement: { spread: { group: 'topic', by: 'zone' } } });
  t.deepEqual([...zoneShares(log.state, 'topic').values()], [3, 3, 3]);
  const moving = [...log.state.streamsOwnedBy('n1')][0]!;
  // n1 is in z1; n2 is in z2: z2 would hold 4 while z1 holds 2.
  t.like(log.apply({ type: 'transfer', stream: moving.id, target: 'n2' }), { ok: false, reason: 'placement_unsatisfiable', streams: [moving.id] });
  // Within the zone it may move.
  t.like(log.apply({ type: 'transfer', stream: moving.id, target: 'n4' }), { ok: true, node: 'n4' });
});

test('a drain gives each stream to a node its placement allows and keeps every zone share of a spread group within one', (t) => {
  const log = zonedLog(3, 2, 20);
  for (let i = 0; i < 12; i++) log.must({ type: 'create-stream', stream: `g-${i}`, placement: { spread: { group: 'topic', by: 'zone' } } });
  log.must({ type: 'create-stream', stream: 'pinned', node: 'n1', placement: { require: { zone: 'z1' } } });
  log.must({ type: 'drain', node: 'n1', maxInFlight: 100 });
  for (const transfer of [...log.state.transfers()]) {
    t.not(transfer.target, 'n1');
    log.settle(transfer.stream);
  }
  t.is(log.state.ownedCount('n1'), 0);
  t.is(log.state.stream('pinned')!.owner, 'n4', 'the only other node of z1');
  t.true(spreadOf(zoneShares(log.state, 'topic')) <= 1);
});

test('a stream whose required labels only the draining node carries stays, and the drain goes on with the others', (t) => {
  const log = new AppliedLog();
  log.must({ type: 'register-node', node: 'a', address: 'http://a', slots: 5, labels: { gpu: 'yes' } });
  log.must({ type: 'register-node', node: 'b', address: 'http://b', slots: 5 });
  log.must({ type: 'create-stream', stream: 'needs-gpu', node: 'a', placement: { require: { gpu: 'yes' } } });
  log.must({ type: 'create-stream', stream: 'plain', node: 'a' });
  log.must({ type: 'drain', node: 'a' });
  t.deepEqual([...log.state.transfers()].map((tr) => tr.stream), ['plain']);
  log.settle('plain');
  t.is(log.state.stream('needs-gpu')!.owner, 'a');
});

test('a failover with no live node satisfying a placement leaves the stream where it is and names it', (t) => {
  const log = new AppliedLog();
  log.must({ type: 'register-node', node: 'a', address: 'http://a', slots: 5, labels: { zone: 'z1' } });
  log.must({ type: 'register-node', node: 'b', address: 'http://b', slots: 5, labels: { zone: 'z2' } });
  log.must({ type: 'create-stream', stream: 'z1-only', node: 'a', placement: { require: { zone: 'z1' } } });
  log.must({ type: 'create-stream', stream: 'anywhere', node: 'a' });
  log.must({ type: 'node-liveness', node: 'a', liveness: 'Dead' });
  const result = log.apply({ type: 'failover', node: 'a' });
  t.like(result, { ok: true, moved: 1, remaining: 1, unplaceable: ['z1-only'] });
  t.is(log.state.stream('z1-only')!.owner, 'a');
  t.is(log.state.stream('anywhere')!.owner, 'b');
});

test('rebalance never plans a move its placement forbids, and its moves keep a spread group even', (t) => {
  const log = zonedLog(2, 2, 20);
  // Everything on n1 (z1) first: pinned to z1, or spread (created on n1 by name is allowed only while even).
  for (let i = 0; i < 6; i++) log.must({ type: 'create-stream', stream: `pin-${i}`, node: 'n1', placement: { require: { zone: 'z1' } } });
  const result = log.apply({ type: 'rebalance', maxInFlight: 100 });
  t.true(result.ok);
  for (const transfer of [...log.state.transfers()]) {
    t.is(labelOf(log.state.node(transfer.target)!.labels, 'zone'), 'z1', `${transfer.stream} stays in z1`);
    log.settle(transfer.stream);
  }
  t.is(log.state.ownedCount('n3'), 3);
});

/** Nodes with random zones (and some without), random slots; streams with random placements. */
const scenario = fc.record({
  nodes: fc.array(fc.record({ zone: fc.option(fc.constantFrom('z1', 'z2', 'z3'), { nil: undefined }), slots: fc.integer({ min: 1, max: 6 }) }), { minLength: 1, maxLength: 7 }),
  streams: fc.array(
    fc.record({
      require: fc.option(fc.constantFrom('z1', 'z2', 'z3'), { nil: undefined }),
      spread: fc.boolean(),
    }),
    { maxLength: 25 },
  ),
  drain: fc.nat(),
  dead: fc.nat(),
});

test('property: creates, a drain, a failover and a rebalance never put a stream where its required labels do not hold, and a spread group stays within one per zone', (t) => {
  fc.assert(
    fc.property(scenario, ({ nodes, streams, drain, dead }) => {
      const log = new AppliedLog();
      nodes.forEach((n, i) => log.must({ type: 'register-node', node: `n${i}`, address: `http://n${i}`, slots: n.slots, ...(n.zone ? { labels: { zone: n.zone } } : {}) }));
      const placements = new Map<string, StreamPlacement>();
      streams.forEach((s, i) => {
        const placement: StreamPlacement = { ...(s.require ? { require: { zone: s.require } } : {}), ...(s.spread ? { spread: { group: 'g', by: 'zone' } } : {}) };
        const result = log.apply({ type: 'create-stream', stream: `s${i}`, placement });
        if (!result.ok) {
          // Refused only for a reason: no room at all, or no node its placement allows.
          if (!['no_free_slots', 'placement_unsatisfiable'].includes(result.reason)) throw new Error(`create refused: ${result.message}`);
          const anyRoom = [...log.state.placeableNodes()].some((node) => !s.require || labelOf(node.labels, 'zone') === s.require);
          if (result.reason === 'placement_unsatisfiable' && anyRoom && !s.spread) throw new Error(`s${i} refused although a node carries its zone with room`);
        } else placements.set(`s${i}`, placement);
      });
      const check = (when: string) => {
        for (const [id, placement] of placements) {
          const stream = log.state.stream(id)!;
          const at = log.state.transfer(id)?.target ?? stream.owner;
          if (placement.require && labelOf(log.state.node(at)!.labels, 'zone') !== placement.require.zone) throw new Error(`${when}: ${id} is on ${at}, outside ${placement.require.zone}`);
        }
        const shares = zoneShares(log.state, 'g');
        // Only zones with a live node that takes the group count: a share on a Dead node's zone is where failover could not reach.
        const live = new Map([...shares].filter(([zone]) => [...log.state.nodes()].some((n) => labelOf(n.labels, 'zone') === zone && livenessOf(n) !== 'Dead' && !n.draining)));
        if (live.size > 1 && placements.size > 0 && [...placements.values()].every((p) => !p.require) && spreadOf(live) > 1) {
          throw new Error(`${when}: the spread group is uneven: ${JSON.stringify([...live])}`);
        }
      };
      check('after the creates');
      const settleAll = () => {
        for (const transfer of [...log.state.transfers()]) log.settle(transfer.stream);
      };
      log.must({ type: 'drain', node: `n${drain % nodes.length}`, maxInFlight: 100 });
      check('during the drain');
      settleAll();
      check('after the drain');
      const victim = `n${dead % nodes.length}`;
      log.must({ type: 'node-liveness', node: victim, liveness: 'Dead' });
      log.must({ type: 'failover', node: victim });
      check('after the failover');
      log.must({ type: 'rebalance', maxInFlight: 100 });
      check('during the rebalance');
      settleAll();
      check('after the rebalance');
    }),
    { numRuns: 300, seed: 28_001 },
  );
  t.pass();
});

test('labels, placements and the spread counts survive a snapshot and restore, pending transfers included', (t) => {
  const log = zonedLog(3, 2, 10);
  for (let i = 0; i < 6; i++) log.must({ type: 'create-stream', stream: `r-${i}`, placement: { spread: { group: 'topic', by: 'zone' }, prefer: { disk: 'ssd' } } });
  const leaving = [...log.state.streamsOwnedBy('n1')][0]!;
  // Within its zone (n4 is z1 too): pending, it counts where it goes.
  const before = log.state.spreadCount('topic', 'n4');
  log.must({ type: 'transfer', stream: leaving.id, target: 'n4' });
  t.is(log.state.spreadCount('topic', 'n4'), before + 1);
  const copy = log.machine.restore(JSON.parse(JSON.stringify(log.machine.snapshot(log.state))));
  t.deepEqual(copy.toSnapshot(), log.state.toSnapshot());
  for (const node of ['n1', 'n2', 'n3', 'n4', 'n5', 'n6']) t.is(copy.spreadCount('topic', node), log.state.spreadCount('topic', node), node);
  t.deepEqual(copy.node('n2')!.labels, { zone: 'z2', disk: 'hdd' });
  t.deepEqual(copy.stream('r-0')!.placement, { spread: { group: 'topic', by: 'zone' }, prefer: { disk: 'ssd' } });
  // The restored state decides as the original: the next create goes to the same node.
  t.deepEqual(copy.clone().toSnapshot(), copy.toSnapshot());
  const next = { type: 'create-stream', stream: 'r-next', placement: { spread: { group: 'topic', by: 'zone' } } } as const;
  const original = log.apply(next);
  const restored = new AppliedLog();
  restored.state = copy;
  t.deepEqual(restored.apply(next), original);
});

test('set-placement replaces a placement without moving the stream, and moves its spread count between groups', (t) => {
  const log = zonedLog(3, 1, 5);
  log.must({ type: 'create-stream', stream: 'm', node: 'n1', placement: { spread: { group: 'a', by: 'zone' } } });
  t.is(log.state.spreadCount('a', 'n1'), 1);
  t.like(log.apply({ type: 'set-placement', stream: 'm', placement: { spread: { group: 'b', by: 'zone' }, require: { disk: 'hdd' } } }), { ok: true, node: 'n1', epoch: 1, satisfied: false });
  t.is(log.state.spreadCount('a', 'n1'), 0);
  t.is(log.state.spreadCount('b', 'n1'), 1);
  t.like(log.state.stream('m')!, { owner: 'n1', epoch: 1 });
  t.like(log.apply({ type: 'set-placement', stream: 'm', placement: {} }), { ok: true, satisfied: true });
  t.is(log.state.stream('m')!.placement, undefined);
  t.is(log.state.spreadCount('b', 'n1'), 0);
  t.like(log.apply({ type: 'set-placement', stream: 'nope', placement: {} }), { ok: false, reason: 'unknown_stream' });
});
