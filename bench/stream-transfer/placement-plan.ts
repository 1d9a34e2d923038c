// Placement benchmark, the state machine alone (no I/O): 100,000 streams on 90 nodes in 10
// zones, half of them in spread groups of 50 (the partitions of 1,000 topics spread by zone),
// a tenth pinned to one zone; then 10 empty nodes join and a rebalance is planned. Measured:
// the time to create the streams with their placements (per create), the time to plan the
// rebalance, and the moves it plans against the minimum (what the new nodes need to reach the
// average), and whether any planned move breaks a placement.
// Run: npm run build && node --conditions=baton-internal dist/bench/stream-transfer/placement-plan.js
//   (BENCH_QUICK=1: 10,000 streams). Prints a human table, then one JSON line.
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { StreamCommand } from '@baton/stream-transfer/internal/commands.js';
import { labelOf, type StreamPlacement } from '@baton/stream-transfer/internal/labels.js';
import { planRebalance } from '@baton/stream-transfer/internal/placement.js';
import { placementAllows } from '@baton/stream-transfer/internal/placement-rules.js';
import { StreamStateMachine } from '@baton/stream-transfer/internal/state-machine.js';

const QUICK = process.env.BENCH_QUICK === '1';
const STREAMS = QUICK ? 10_000 : 100_000;
const ZONES = 10;
const FIRST_NODES = 90;
const JOINING = 10;
const GROUP_SIZE = 50;

export function planPlacement() {
  const machine = new StreamStateMachine();
  const state = machine.initial();
  let index = 0;
  const apply = (command: StreamCommand) => {
    const result = machine.apply(state, command, { position: { term: 1, index: ++index }, voters: ['m1'] });
    if (!result.ok) throw new Error(`${command.type} refused: ${result.message}`);
  };
  const register = (i: number) =>
    apply({ type: 'register-node', node: `n${i}`, address: `http://n${i}`, slots: STREAMS, labels: { zone: `z${i % ZONES}` } });
  for (let i = 0; i < FIRST_NODES; i++) register(i);

  const placements = new Map<string, StreamPlacement>();
  const createdAt = performance.now();
  for (let s = 0; s < STREAMS; s++) {
    const placement: StreamPlacement =
      s % 2 === 0 ? { spread: { group: `topic-${Math.floor(s / (2 * GROUP_SIZE))}`, by: 'zone' } } : s % 10 === 1 ? { require: { zone: `z${s % ZONES}` } } : {};
    apply({ type: 'create-stream', stream: `s${s}`, placement });
    placements.set(`s${s}`, placement);
  }
  const createMs = performance.now() - createdAt;

  for (let i = FIRST_NODES; i < FIRST_NODES + JOINING; i++) register(i);
  const plannedAt = performance.now();
  const moves = planRebalance(state);
  const planMs = performance.now() - plannedAt;

  // The same goal as a plan object: planned inside apply with its predicted effect (per node,
  // per zone, the violations over every stream with a placement), as POST /v1/admin/plans does.
  const timedPlan = (goal: Extract<StreamCommand, { type: 'create-plan' }>['goal']) => {
    const at = performance.now();
    const result = machine.apply(state, { type: 'create-plan', goal, limits: { maxConcurrent: 16 } }, { position: { term: 1, index: ++index }, voters: ['m1'] });
    const ms = performance.now() - at;
    if (!result.ok || !result.plan) throw new Error('create-plan refused');
    return { ms, moves: state.plans.get(result.plan)!.planned };
  };
  const planObject = timedPlan({ type: 'rebalance' });
  const drainObject = timedPlan({ type: 'drain', nodes: ['n0'] });
  const preferObject = timedPlan({ type: 'restore-preferences' });

  // The least a rebalance must move: what the empty nodes need to reach the floor of the average.
  const floor = Math.floor(STREAMS / (FIRST_NODES + JOINING));
  const minimum = JOINING * floor;
  const breaking = moves.filter((m) => !placementAllows(state, placements.get(m.stream), state.stream(m.stream)!.owner, state.node(m.target)!));
  const pinnedOutside = moves.filter((m) => {
    const required = placements.get(m.stream)?.require?.zone;
    return required !== undefined && labelOf(state.node(m.target)!.labels, 'zone') !== required;
  });
  return {
    bench: 'stream-transfer',
    measure: 'placement-plan',
    streams: STREAMS,
    nodes: FIRST_NODES + JOINING,
    zones: ZONES,
    createUsPerStream: Math.round((createMs * 1000) / STREAMS),
    planMs: Math.round(planMs),
    plannedMoves: moves.length,
    minimumMoves: minimum,
    movesOverMinimum: Math.round((moves.length / minimum) * 100) / 100,
    movesBreakingPlacement: breaking.length + pinnedOutside.length,
    planObjectMs: Math.round(planObject.ms),
    planObjectMoves: planObject.moves,
    drainPlanMs: Math.round(drainObject.ms),
    drainPlanMoves: drainObject.moves,
    restorePreferencesPlanMs: Math.round(preferObject.ms),
  };
}

export function describePlacementPlan(r: ReturnType<typeof planPlacement>): string {
  return [
    `placement: ${r.streams} streams on ${r.nodes - JOINING} nodes in ${r.zones} zones (half spread by zone in groups of ${GROUP_SIZE}, a tenth pinned), then ${JOINING} empty nodes join`,
    `  create with placement: ${r.createUsPerStream} µs per stream`,
    `  rebalance plan: ${r.planMs} ms for ${r.plannedMoves} moves (minimum ${r.minimumMoves}: ${r.movesOverMinimum}x); moves breaking a placement: ${r.movesBreakingPlacement}`,
    `  as a plan object (in apply, with its predicted effect): rebalance ${r.planObjectMs} ms (${r.planObjectMoves} moves), drain of one node ${r.drainPlanMs} ms (${r.drainPlanMoves} moves), restore-preferences ${r.restorePreferencesPlanMs} ms`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = planPlacement();
  console.log(describePlacementPlan(result));
  console.log('');
  console.log(JSON.stringify(result));
}
