import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { token } from '@baton/contracts';
import { buildInfo } from './build-info.js';
import { processEventLoopDelay } from './event-loop-delay.js';

/** What moved where: a stream or an authority, from one node or datacenter to another. */
export interface TransferNamed {
  name: string;
  source: string;
  target: string;
}

/** What the consensus gauges show; `commitIndex` only when the implementation knows it. */
export interface ConsensusReading {
  term: number;
  appliedIndex: number;
  commitIndex?: number;
  isLeader: boolean;
}

export interface BatonMetricsOptions {
  /** Node process metrics (heap, event loop lag, GC). On by default; off in tight unit tests. */
  defaultMetrics?: boolean;
  /**
   * `baton_event_loop_delay_seconds{quantile}`: how late this process's event loop ran. On by
   * default; each host of a process measures the same loop.
   */
  eventLoopDelay?: boolean;
  /** Labels on every series, e.g. `{member: 'n1'}` when several hosts share a scrape target. */
  labels?: Record<string, string>;
}

/** Seconds; wide enough for a parked open (10 s) and a catch-up budget (5 min). */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const TRANSFER_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/**
 * The Prometheus metrics of one host, in a registry of its own: prom-client's global default
 * registry would make two hosts in one process (tests, `baton up` in-process, benchmarks)
 * collide on metric names. Counters and histograms are incremented by the variants; gauges
 * that mirror state (consensus position, plans in flight) are read at scrape time from a
 * source the variant binds, so they can never drift from the state they describe.
 */
export class BatonMetrics {
  readonly registry = new Registry();
  /** Transfers that reached an outcome (`committed`, `cancelled`, `timed_out`, `failed`...). */
  readonly transfers: Counter<'outcome'>;
  readonly transferDuration: Histogram<'outcome'>;
  /** Transfers proposed or planned and not yet settled. */
  readonly transfersInFlight: Gauge;
  /** StoreUnavailableError raised by a store, by store and operation. */
  readonly storeErrors: Counter<'store' | 'operation'>;
  /** Damaged records found in a durable file (CorruptRecordError), by store: stream-wal, raft-log, raft-snapshot, change-feed. */
  readonly storageCorruptions: Counter<'store'>;
  readonly httpRequestDuration: Histogram<'listener' | 'method' | 'route' | 'status'>;
  /** Peer requests refused (4xx, 503), by listener, route template and problem type: what a hostile or broken peer tried. */
  readonly peerRefusals: Counter<'listener' | 'route' | 'reason'>;
  /** Connections a listener closed before serving them (caps, eviction, no request in time), by reason. */
  readonly connectionRefusals: Counter<'listener' | 'reason'>;
  /** Requests refused with 503 because the listener's budget of request bytes in flight was spent. */
  readonly bodyBudgetRefusals: Counter<'listener'>;
  /** Writes a new home refused because its replica was short of the final serials its move recorded. */
  readonly homeCatchUpRefusals: Counter;
  /** Authorities this member is the new home of, refused a write for, and has not caught up on. */
  readonly homesCatchingUp: Gauge;
  readonly peerClockOffset: Gauge<'peer'>;
  readonly consensusTerm: Gauge;
  readonly consensusCommitIndex: Gauge;
  readonly consensusAppliedIndex: Gauge;
  readonly consensusIsLeader: Gauge;
  readonly eventLoopDelay: Gauge<'quantile'> | undefined;
  /** Always 1; its labels say which code runs (the member report's version, build and nodeVersion). */
  readonly buildInfo: Gauge<'version' | 'build' | 'node_version'>;

  private inFlightSource?: () => number;
  private readonly transferListeners = new Set<(outcome: string, durationMs: number, about?: TransferNamed) => void>();
  private consensusSource?: () => ConsensusReading;
  private catchingUpSource?: () => number;
  private peerClockSource?: () => { peer: string; offsetMs: number }[];

  constructor(options: BatonMetricsOptions = {}) {
    const registers = [this.registry];
    if (options.labels) this.registry.setDefaultLabels(options.labels);
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    // Collect callbacks read the bound sources; `metrics` is captured because prom-client
    // calls them with the metric as `this`.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const metrics = this;
    this.transfers = new Counter({
      name: 'baton_transfers_total',
      help: 'Transfers that reached an outcome, by outcome.',
      labelNames: ['outcome'],
      registers,
    });
    this.transferDuration = new Histogram({
      name: 'baton_transfer_duration_seconds',
      help: 'Time from a transfer being accepted to its outcome, by outcome.',
      labelNames: ['outcome'],
      buckets: TRANSFER_BUCKETS,
      registers,
    });
    this.transfersInFlight = new Gauge({
      name: 'baton_transfers_in_flight',
      help: 'Transfers accepted and not yet settled (pending transfers, in-flight plans).',
      registers,
      collect() {
        if (metrics.inFlightSource) this.set(metrics.inFlightSource());
      },
    });
    this.storeErrors = new Counter({
      name: 'baton_store_errors_total',
      help: 'Store operations that failed as unavailable, by store and operation.',
      labelNames: ['store', 'operation'],
      registers,
    });
    this.storageCorruptions = new Counter({
      name: 'baton_storage_corruptions_total',
      help: 'Damaged records found in a durable file (not a torn tail), by store (stream-wal, raft-log, raft-snapshot, change-feed): the member refuses to start until repaired.',
      labelNames: ['store'],
      registers,
    });
    this.httpRequestDuration = new Histogram({
      name: 'baton_http_request_duration_seconds',
      help: 'HTTP request duration, by listener, method, route template and status.',
      labelNames: ['listener', 'method', 'route', 'status'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.peerRefusals = new Counter({
      name: 'baton_peer_refusals_total',
      help: 'Peer requests refused (4xx, 503), by listener, route template and reason (the problem type).',
      labelNames: ['listener', 'route', 'reason'],
      registers,
    });
    this.connectionRefusals = new Counter({
      name: 'baton_connection_refusals_total',
      help: 'Connections a listener closed before serving them, by listener and reason (listener_full, address_full, evicted, first_request_timeout).',
      labelNames: ['listener', 'reason'],
      registers,
    });
    this.bodyBudgetRefusals = new Counter({
      name: 'baton_body_budget_refusals_total',
      help: "Requests answered 503 because the listener's budget of request body bytes in flight was spent, by listener.",
      labelNames: ['listener'],
      registers,
    });
    this.homeCatchUpRefusals = new Counter({
      name: 'baton_home_catch_up_refusals_total',
      help: 'Writes refused (503) by a new home whose replica was short of the final serials its move recorded.',
      registers,
    });
    this.homesCatchingUp = new Gauge({
      name: 'baton_homes_catching_up',
      help: 'Authorities this member became home of by a planned move and was last seen short of a final serial of (a refused write, or a look-over of the moves it follows).',
      registers,
      collect() {
        if (metrics.catchingUpSource) this.set(metrics.catchingUpSource());
      },
    });
    this.peerClockOffset = new Gauge({
      name: 'baton_peer_clock_offset_seconds',
      help: "Each peer's clock minus this member's, as its last feed page read it (within half that pull's round trip).",
      labelNames: ['peer'],
      registers,
      collect() {
        const readings = metrics.peerClockSource?.();
        if (!readings) return;
        this.reset();
        for (const r of readings) this.set({ peer: r.peer }, r.offsetMs / 1000);
      },
    });
    const consensusGauge = (name: string, help: string, read: (r: ConsensusReading) => number | undefined) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          const reading = metrics.consensusSource?.();
          const value = reading === undefined ? undefined : read(reading);
          if (value !== undefined) this.set(value);
        },
      });
    this.consensusTerm = consensusGauge('baton_consensus_term', 'Current consensus term.', (r) => r.term);
    this.consensusCommitIndex = consensusGauge(
      'baton_consensus_commit_index',
      'Highest log index known committed.',
      (r) => r.commitIndex,
    );
    this.consensusAppliedIndex = consensusGauge(
      'baton_consensus_applied_index',
      'Highest log index applied to the state machine on this member.',
      (r) => r.appliedIndex,
    );
    this.consensusIsLeader = consensusGauge(
      'baton_consensus_is_leader',
      '1 when this member leads, 0 otherwise.',
      (r) => (r.isLeader ? 1 : 0),
    );
    this.buildInfo = new Gauge({
      name: 'baton_build_info',
      help: 'Always 1: the package version, the git commit of the build (or unknown) and the Node.js version this member runs.',
      labelNames: ['version', 'build', 'node_version'],
      registers,
    });
    const build = buildInfo();
    this.buildInfo.set({ version: build.version, build: build.build, node_version: build.nodeVersion }, 1);
    if (options.eventLoopDelay ?? true) {
      const monitor = processEventLoopDelay();
      this.eventLoopDelay = new Gauge({
        name: 'baton_event_loop_delay_seconds',
        help:
          'How late the event loop ran (perf_hooks monitorEventLoopDelay): quantiles 0.5 and 0.99 over ' +
          'the last complete 10 s window; quantile 1 is the longest delay of that window and the current one.',
        labelNames: ['quantile'],
        registers,
        collect() {
          const r = monitor.read();
          this.set({ quantile: '0.5' }, r.p50);
          this.set({ quantile: '0.99' }, r.p99);
          this.set({ quantile: '1' }, r.max);
        },
      });
    }
  }

  /** Counts one settled transfer and observes how long it took; `about` names it for the dashboard (never a label). */
  recordTransfer(outcome: string, durationMs: number, about?: TransferNamed): void {
    this.transfers.inc({ outcome });
    this.transferDuration.observe({ outcome }, Math.max(0, durationMs) / 1000);
    for (const listener of this.transferListeners) listener(outcome, durationMs, about);
  }

  /** Called with each transfer recorded (the dashboard's plot of recent durations). Returns the unsubscribe. */
  onTransferRecorded(listener: (outcome: string, durationMs: number, about?: TransferNamed) => void): () => void {
    this.transferListeners.add(listener);
    return () => void this.transferListeners.delete(listener);
  }

  /** The in-flight gauge reads this at every scrape. */
  observeTransfersInFlight(source: () => number): void {
    this.inFlightSource = source;
  }

  /** The homes-catching-up gauge reads this at every scrape. */
  observeHomesCatchingUp(source: () => number): void {
    this.catchingUpSource = source;
  }

  /** The peer clock offset gauge reads this at every scrape. */
  observePeerClocks(source: () => { peer: string; offsetMs: number }[]): void {
    this.peerClockSource = source;
  }

  /** The consensus gauges read this at every scrape. */
  observeConsensus(source: () => ConsensusReading): void {
    this.consensusSource = source;
  }

  /** The exposition text and its content type, as served at /metrics. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

export const METRICS = token<BatonMetrics>('Metrics');
