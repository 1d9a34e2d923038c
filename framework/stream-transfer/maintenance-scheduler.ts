import type { Clock, Logger } from '@baton/contracts';
import { PeriodicRound } from './periodic-round.js';
import { SYSTEM_ACTORS } from './audit-trail.js';
import type { StreamCommand } from './commands.js';
import { nodesInMaintenance } from './maintenance.js';
import type { NodeId, PlannedMove } from './model.js';
import { planRebalance } from './placement.js';
import type { StreamConsensus } from './stream-node.js';

/** How often the leader looks at the windows (a start or an end is late by at most this). */
const ROUND_MS = 250;
/** Moves proposed in one round at most, whatever the pace (a round that came late does not burst). */
const MAX_MOVES_PER_ROUND = 256;

/**
 * Starts and ends maintenance windows at their times, and hands streams back to a node whose
 * window ended at the pace the window set. Only the metadata leader does it; a new leader
 * carries on from the replicated state (the window, the node's `returning` mark), so nothing is
 * lost with a leader. Each round is O(nodes) plus, while a node is returning, one rebalance plan
 * per batch of moves (planned once, consumed at the pace, planned again when used up).
 */
export class MaintenanceScheduler {
  private readonly rounds: PeriodicRound;
  /** Per returning node: moves planned towards it, and when the last one was proposed. */
  private readonly returning = new Map<NodeId, { moves: PlannedMove[]; lastAt: number }>();

  constructor(private readonly deps: { consensus: StreamConsensus; clock: Clock; logger: Logger }) {
    this.rounds = new PeriodicRound({ clock: deps.clock, logger: deps.logger, everyMs: ROUND_MS, what: 'maintenance round' }, () => this.round());
  }

  start(): void {
    this.rounds.start();
  }

  stop(): void {
    this.rounds.stop();
  }

  private async round(): Promise<void> {
    const { consensus, clock } = this.deps;
    if (!consensus.leadership().isLeader) {
      this.returning.clear();
      return;
    }
    const now = clock.now();
    for (const node of nodesInMaintenance(consensus.view().state)) {
      const window = node.maintenance;
      if (window && now >= window.endAt) await this.propose({ type: 'end-maintenance', node: node.id }, 'maintenance window ended');
      else if (window && !window.active && now >= window.startAt) await this.propose({ type: 'begin-maintenance', node: node.id }, 'maintenance window began');
      else if (!window && node.returning) await this.handBack(node.id, node.returning.movesPerSecond, now);
    }
    for (const id of this.returning.keys()) if (!consensus.view().state.node(id)?.returning) this.returning.delete(id);
  }

  /** Proposes the moves towards `node` that its pace allows since the last one; clears the mark when none is left. */
  private async handBack(node: NodeId, movesPerSecond: number, now: number): Promise<void> {
    let pace = this.returning.get(node);
    if (!pace) this.returning.set(node, (pace = { moves: [], lastAt: now - 1000 / movesPerSecond }));
    const due = Math.min(MAX_MOVES_PER_ROUND, Math.floor(((now - pace.lastAt) * movesPerSecond) / 1000));
    for (let made = 0; made < due; made++) {
      if (pace.moves.length === 0) {
        const state = this.deps.consensus.view().state;
        // Moves of streams already moving are not planned; while moves towards the node are in flight, wait for them.
        pace.moves = planRebalance(state).filter((move) => move.target === node);
        if (pace.moves.length === 0) {
          if (state.incomingCount(node) === 0) await this.propose({ type: 'maintenance-returned', node }, 'nothing more to hand back');
          return;
        }
      }
      const move = pace.moves.shift()!;
      // Each move uses up one interval of the pace; time not used for more than a second is not saved up.
      pace.lastAt = Math.max(pace.lastAt, now - 1000) + 1000 / movesPerSecond;
      await this.propose({ type: 'transfer', stream: move.stream, target: node, reason: 'maintenance', actor: SYSTEM_ACTORS.maintenance, at: Math.floor(now) }, 'stream handed back');
    }
  }

  private async propose(command: StreamCommand, what: string): Promise<void> {
    const receipt = await this.deps.consensus.propose(command);
    if (receipt.result.ok) this.deps.logger.info({ command: command.type, ...('node' in command ? { node: command.node } : {}), ...('stream' in command ? { stream: command.stream } : {}) }, what);
    else this.deps.logger.debug({ command: command.type, result: receipt.result }, `${what}: refused`);
  }
}
