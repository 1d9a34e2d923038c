import { Counter, Gauge } from 'prom-client';
import type { BatonMetrics } from '@baton/http';
import type { StreamResult } from './commands.js';
import { publishedLiveness } from './cluster-view.js';
import { livenessOf, type NodeLiveness } from './model.js';
import type { StreamConsensus } from './stream-node.js';

const STATES: NodeLiveness[] = ['Alive', 'Suspect', 'Dead'];

/**
 * The liveness and failover series of a stream node:
 * - `baton_stream_nodes{liveness}`: registered nodes by published liveness (the same on every
 *   member: it is read from the replicated metadata at scrape time);
 * - `baton_stream_node_liveness{stream_node, liveness}`: 1 for each node's published state, 0 for
 *   the other two (the verdict `baton status` and the dashboard show, from the same record). The
 *   node judged is `stream_node`: `node` is every series' label naming the member that answers
 *   the scrape, which a second `node` would overwrite;
 * - `baton_stream_failovers_total{trigger}`: failovers this member proposed that moved streams,
 *   by `operator` or `automatic`, and `baton_stream_failover_streams_total` the streams moved;
 * - `baton_stream_takeovers_total{outcome}`: streams this member took over (`claimed`: tail
 *   found and old owner fenced) or could not (`fenced`: a later takeover got there first);
 * - `baton_stream_fenced_sessions_total`: sessions of this member the object store fenced.
 */
export class LivenessMetrics {
  readonly failovers: Counter<'trigger'>;
  readonly failoverStreams: Counter;
  readonly takeovers: Counter<'outcome'>;
  readonly fencedSessions: Counter;

  constructor(metrics: BatonMetrics, consensus: StreamConsensus) {
    const registers = [metrics.registry];
    new Gauge({
      name: 'baton_stream_nodes',
      help: 'Registered stream nodes by published liveness (Alive, Suspect, Dead).',
      labelNames: ['liveness'],
      registers,
      collect() {
        const counts = new Map<NodeLiveness, number>(STATES.map((s) => [s, 0]));
        for (const node of consensus.view().state.nodes()) {
          const liveness = livenessOf(node);
          counts.set(liveness, counts.get(liveness)! + 1);
        }
        for (const [liveness, count] of counts) this.set({ liveness }, count);
      },
    });
    new Gauge({
      name: 'baton_stream_node_liveness',
      help: 'Published liveness of each registered stream node: 1 for its state (Alive, Suspect, Dead), 0 for the others.',
      labelNames: ['stream_node', 'liveness'],
      registers,
      collect() {
        this.reset();
        const state = consensus.view().state;
        for (const node of state.nodes()) {
          const current = publishedLiveness(state, node.id);
          for (const liveness of STATES) this.set({ stream_node: node.id, liveness }, liveness === current ? 1 : 0);
        }
      },
    });
    this.failovers = new Counter({
      name: 'baton_stream_failovers_total',
      help: 'Failovers proposed by this member that moved streams, by trigger (operator, automatic).',
      labelNames: ['trigger'],
      registers,
    });
    this.failoverStreams = new Counter({
      name: 'baton_stream_failover_streams_total',
      help: 'Streams moved by failovers this member proposed.',
      registers,
    });
    this.takeovers = new Counter({
      name: 'baton_stream_takeovers_total',
      help: 'Streams this member took over after a failover, by outcome (claimed, fenced).',
      labelNames: ['outcome'],
      registers,
    });
    this.fencedSessions = new Counter({
      name: 'baton_stream_fenced_sessions_total',
      help: "Sessions of this member whose writes the object store refused after another member's takeover.",
      registers,
    });
  }

  failover(trigger: 'operator' | 'automatic', result: StreamResult): void {
    if (!result.ok || !result.moved) return;
    this.failovers.inc({ trigger });
    this.failoverStreams.inc(result.moved);
  }
}
