import { SYSTEM_ACTORS, type AuditSeal } from './audit-trail.js';
import type { RejectReason, StreamCommand, StreamResult } from './commands.js';
import { labelOf } from './labels.js';
import type { NodeId, NodeRecord } from './model.js';
import { DEFAULT_DRAIN_IN_FLIGHT } from './drain-defaults.js';
import type { StreamMetadata } from './stream-metadata.js';

/**
 * Maintenance windows (the apply rules; maintenance-scheduler.ts proposes their start and end).
 * A window is scheduled on a node with a start and an end (the proposer's wall clock). From its
 * start the node drains: it keeps no stream and takes no new one. At its end it is undrained and
 * marked returning: the scheduler then hands streams back at the window's pace until a
 * rebalance finds nothing more to give it. A cluster budget bounds the windows that overlap:
 * at most `maxNodes` nodes, and with `oneValueOf` all of them sharing one value of that label
 * (one zone at a time). Costs O(nodes) per command, never O(streams).
 */
export interface MaintenanceWindow {
  startAt: number;
  endAt: number;
  /** The pace streams are handed back at, once the window ends. */
  movesPerSecond: number;
  /** Started: the node is draining for it. */
  active: boolean;
}

/** How many nodes may be in maintenance at once, and whether they must share one label value. */
export interface MaintenanceBudget {
  maxNodes: number;
  oneValueOf?: string;
}

type Reject = (reason: RejectReason, message: string) => StreamResult;
type Command<T extends StreamCommand['type']> = Extract<StreamCommand, { type: T }>;

export function scheduleMaintenance(state: StreamMetadata, c: Command<'schedule-maintenance'>, reject: Reject): StreamResult {
  const node = state.node(c.node);
  if (!node) return reject('unknown_node', `node ${c.node} is not registered`);
  if (c.endAt <= c.startAt) return reject('invalid_command', 'a maintenance window ends after it starts');
  if (node.maintenance?.active) return reject('maintenance_active', `node ${c.node} is in maintenance until ${new Date(node.maintenance.endAt).toISOString()}: end it first`);
  const overlapping = [...state.nodeRecords()].filter(
    (other) => other.id !== node.id && other.maintenance && other.maintenance.startAt < c.endAt && c.startAt < other.maintenance.endAt,
  );
  if (overlapping.length + 1 > c.budget.maxNodes) {
    return reject(
      'maintenance_budget',
      `at most ${c.budget.maxNodes} node(s) may be in maintenance at once; ${overlapping.map((o) => o.id).join(', ')} overlap this window`,
    );
  }
  const by = c.budget.oneValueOf;
  if (by !== undefined) {
    const value = labelOf(node.labels, by);
    const other = overlapping.find((o) => labelOf(o.labels, by) !== value);
    if (other) {
      return reject('maintenance_budget', `windows that overlap must share one ${by}: ${other.id} (${by} ${labelOf(other.labels, by) ?? 'unset'}) overlaps this one (${value ?? 'unset'})`);
    }
  }
  const window: MaintenanceWindow = { startAt: c.startAt, endAt: c.endAt, movesPerSecond: c.movesPerSecond, active: false };
  const { returning: _, ...rest } = node;
  state.putNode({ ...rest, maintenance: window });
  return { ok: true, node: node.id };
}

/** The window's start: the node drains (sealed as a drain by the maintenance actor). */
export function beginMaintenance(state: StreamMetadata, c: Command<'begin-maintenance'>, reject: Reject, seal: AuditSeal): StreamResult {
  const node = state.node(c.node);
  if (!node) return reject('unknown_node', `node ${c.node} is not registered`);
  const window = node.maintenance;
  if (!window) return reject('no_maintenance', `node ${c.node} has no maintenance window`);
  if (window.active) return { ok: true, duplicate: true, node: node.id };
  const drainCause = node.draining
    ? node.drainCause
    : seal.seal({
        kind: 'node_drain',
        subject_type: 'node',
        subject: node.id,
        from: node.id,
        actor: c.actor ?? SYSTEM_ACTORS.maintenance,
        reason: `maintenance window until ${new Date(window.endAt).toISOString()}: ${state.ownedCount(node.id)} streams to give away`,
      });
  state.putNode({
    ...node,
    draining: true,
    // A drain plan's nodes drain at none of their own (0): the window drains them at the default.
    drainInFlight: node.draining && node.drainInFlight > 0 ? node.drainInFlight : DEFAULT_DRAIN_IN_FLIGHT,
    ...(drainCause ? { drainCause } : {}),
    maintenance: { ...window, active: true },
  });
  return { ok: true, node: node.id };
}

/** The window's end (or its cancellation): undrained, and returning at its pace if it had begun. */
export function endMaintenance(state: StreamMetadata, c: Command<'end-maintenance'>, reject: Reject, seal: AuditSeal): StreamResult {
  const node = state.node(c.node);
  if (!node) return reject('unknown_node', `node ${c.node} is not registered`);
  const window = node.maintenance;
  if (!window) return { ok: true, duplicate: true, node: node.id };
  const { maintenance: _, drainCause, ...rest } = node;
  if (!window.active) {
    state.putNode({ ...rest, ...(drainCause ? { drainCause } : {}) });
    return { ok: true, node: node.id };
  }
  state.putNode({ ...rest, draining: false, returning: { movesPerSecond: window.movesPerSecond } });
  seal.seal({
    kind: 'node_undrain',
    subject_type: 'node',
    subject: node.id,
    actor: c.actor ?? SYSTEM_ACTORS.maintenance,
    reason: `maintenance window over: streams come back at ${window.movesPerSecond} per second`,
    ...(drainCause ? { cause: drainCause } : {}),
  });
  return { ok: true, node: node.id };
}

/** Nothing more to hand back: the node is an ordinary node again. */
export function maintenanceReturned(state: StreamMetadata, c: Command<'maintenance-returned'>, reject: Reject): StreamResult {
  const node = state.node(c.node);
  if (!node) return reject('unknown_node', `node ${c.node} is not registered`);
  if (!node.returning) return { ok: true, duplicate: true, node: node.id };
  const { returning: _, ...rest } = node;
  state.putNode(rest);
  return { ok: true, node: node.id };
}

/** Nodes with a window or being handed streams back: what the scheduler looks at (O(nodes)). */
export function nodesInMaintenance(state: StreamMetadata): NodeRecord[] {
  return [...state.nodeRecords()].filter((node) => node.maintenance || node.returning);
}

export type { NodeId };
