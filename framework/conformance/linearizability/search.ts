import { Bitset, Zobrist, hasBit, withBit } from './bitset.js';
import { DeadEnds, type Meter } from './dead-ends.js';
import { buildEntries, lift, unlift, window, type Entry } from './entries.js';
import type { Operation } from './history.js';
import type { Model } from './model.js';
import { stateIdentity } from './state-identity.js';
import { Visited } from './visited.js';

export interface PartitionVerdict<I, O> {
  outcome: 'ok' | 'illegal' | 'unknown';
  steps: number;
  /** The operations searched (unknown-outcome reads, which constrain nothing, left out). */
  operations: Array<Operation<I, O>>;
  /** When illegal: the longest legal order found. */
  longest?: Array<Operation<I, O>>;
}

/** A state the search reached without linearizing another returned operation. */
interface Config<S> {
  state: S;
  /** Unknown-outcome operations applied so far (shared between configurations, never mutated). */
  applied: Uint32Array;
  /** Those applied since the frame was entered, in order (for the report). */
  path: number[];
  /** Set when a legal read was found from here: no other move needs trying. */
  settled: boolean;
}

/** One level of the search: the returned operations linearized so far are fixed. */
interface Frame<S> {
  /** The returned operation whose linearization entered this frame (null at the root)... */
  via: Entry | null;
  /** ...and the ops applied just before it, that one included: the step from the parent. */
  path: number[];
  /** How many operations the path from the root applies. */
  depth: number;
  returned: Entry[];
  unknown: number[];
  /** Grown breadth first by applying unknown-outcome operations, fewest first. */
  configs: Array<Config<S>>;
  at: number;
  next: number;
}

/**
 * Wing & Gong's search with Lowe's memoisation, iterative over Porcupine's linked list of
 * entries with an explicit stack to undo, for one independent part of a history. It succeeds
 * once every returned operation is linearized: an unknown-outcome operation may never have
 * taken effect, so it is only ever applied to enable the next returned one.
 *
 * Three reductions keep concurrent histories small, all exact:
 * - Unknown-outcome operations are applied breadth first from each frame, fewest first, so the
 *   memo's inclusion test (see Visited) discards every longer way to the same state: with many
 *   lost writes the frame holds one configuration per reachable state, not one per subset.
 * - A read (an operation that leaves the state as it is) that is legal where the search stands
 *   is linearized there and nothing else is tried from that point: any linearization that
 *   places it later stays legal with it moved here, since it changes nothing and nothing
 *   remaining had to come before it.
 * - Once the search has run a while, configurations where some operation can no longer be
 *   linearized are dropped as soon as they are reached (see DeadEnds).
 * Every model step counts against `budget`; past it the answer is 'unknown', never a guess.
 */
export function searchPartition<S, I, O>(
  model: Model<S, I, O>,
  part: ReadonlyArray<Operation<I, O>>,
  budget: number,
  deadEndsAfter?: number,
): PartitionVerdict<I, O> {
  const isRead = (op: Operation<I, O>) => model.isReadOnly?.(op.input) ?? false;
  // A read that may never have happened constrains nothing: leaving it out is exact, and cheap.
  const ops = part.filter((op) => !(op.return === undefined && isRead(op)));
  const readOnly = ops.map(isRead);
  const head = buildEntries(ops);
  const linearized = new Bitset(ops.length, new Zobrist(ops.length));
  const identity = stateIdentity(model);
  const visited = new Visited<S>(identity);
  let remaining = ops.filter((op) => op.return !== undefined).length;
  const meter: Meter = { steps: 0 };
  const undecided = (): PartitionVerdict<I, O> => ({
    outcome: 'unknown',
    steps: meter.steps,
    operations: ops,
  });
  // Built once the search has run about as long as building costs (operations squared, unless
  // `deadEndsAfter` says otherwise): a search that ends sooner never pays for it.
  let deadEnds: DeadEnds<S, I, O> | undefined;
  let deadEndsAt = deadEndsAfter ?? ops.length * ops.length;
  let longest: number[] = [];

  const enter = (via: Entry | null, path: number[], depth: number, config: Config<S>) => {
    const { returned, unknown } = window(head, readOnly);
    return { via, path, depth, returned, unknown, configs: [config], at: 0, next: 0 };
  };
  const start: Config<S> = {
    state: model.init(),
    applied: new Uint32Array(linearized.words.length),
    path: [],
    settled: false,
  };
  visited.firstVisit(linearized, start.applied, start.state);
  const stack: Array<Frame<S>> = [enter(null, [], 0, start)];

  while (remaining > 0) {
    if (meter.steps >= deadEndsAt) {
      deadEndsAt = Infinity;
      deadEnds = DeadEnds.build(model, ops, identity, meter, budget);
      if (meter.steps > budget) return undecided();
      deadEnds?.reset((op) => linearized.has(op));
    }
    const frame = stack[stack.length - 1];
    if (frame.at >= frame.configs.length) {
      // Every way on from here failed: undo the step that led here, or give up at the root.
      if (frame.via === null) {
        return {
          outcome: 'illegal',
          steps: meter.steps,
          operations: ops,
          longest: longest.map((i) => ops[i]),
        };
      }
      // The deepest legal prefix is only needed for the report: copied when the search backs
      // out of a new maximum depth, not on every step forward.
      if (frame.depth > longest.length) longest = stack.flatMap((f) => f.path);
      stack.pop();
      unlift(frame.via);
      linearized.clear(frame.via.op);
      deadEnds?.restore(frame.via.op);
      remaining += 1;
      continue;
    }
    const config = frame.configs[frame.at];
    if (frame.next < frame.returned.length) {
      const entry = frame.returned[frame.next++];
      if (++meter.steps > budget) return undecided();
      const op = ops[entry.op];
      const after = model.step(config.state, op.input, op.output);
      if (!after.ok) continue;
      if (readOnly[entry.op] && identity.same(after.state, config.state)) {
        frame.next = frame.returned.length;
        config.settled = true;
      }
      linearized.set(entry.op);
      if (!visited.firstVisit(linearized, config.applied, after.state)) {
        linearized.clear(entry.op);
        continue;
      }
      deadEnds?.linearize(entry.op);
      if (deadEnds?.stuck(after.state, config.applied)) {
        deadEnds.restore(entry.op);
        linearized.clear(entry.op);
        continue;
      }
      lift(entry);
      remaining -= 1;
      const path = [...config.path, entry.op];
      stack.push(
        enter(entry, path, frame.depth + path.length, {
          state: after.state,
          applied: config.applied,
          path: [],
          settled: false,
        }),
      );
      continue;
    }
    // No returned operation works from this configuration as it is: try it after one more
    // unknown-outcome operation took effect (queued behind those with fewer applied).
    if (!config.settled) {
      for (const u of frame.unknown) {
        if (hasBit(config.applied, u)) continue;
        if (++meter.steps > budget) return undecided();
        const after = model.step(config.state, ops[u].input, ops[u].output);
        if (!after.ok) continue;
        const applied = withBit(config.applied, u);
        if (!visited.firstVisit(linearized, applied, after.state)) continue;
        if (deadEnds?.stuck(after.state, applied)) continue;
        frame.configs.push({
          state: after.state,
          applied,
          path: [...config.path, u],
          settled: false,
        });
      }
    }
    frame.at += 1;
    frame.next = 0;
  }
  return { outcome: 'ok', steps: meter.steps, operations: ops };
}
