import {
  type DocumentedRoutes,
  BearerTokens,
  createHttpServer,
  type HttpServer,
  type BatonMetrics,
  countStoreErrors,
  type Tracing,
} from '@baton/http';
import type { AuditStore, Clock, CorruptRecordError, Logger, ObjectStore, Rng } from '@baton/contracts';
import { AuditTrailProjection } from '@baton/consensus';
import type { Lifecycle } from '@baton/kernel';
import { ConsensusReadiness, RecentTransfers } from '@baton/cluster';
import { createStreamApiApp } from './api.js';
import { DiskWal } from './disk-wal.js';
import { FileWal } from './file-wal.js';
import { HandoffWatcher } from './handoff-watcher.js';
import { LivenessMetrics } from './liveness-metrics.js';
import { LivenessObserver } from './liveness-observer.js';
import { MaintenanceScheduler } from './maintenance-scheduler.js';
import { PlanPacer } from './plan-pacer.js';
import { earliestDeadMs } from './node-liveness.js';
import { NodeLease } from './node-lease.js';
import { MemoryWalDisk } from './memory-wal-disk.js';
import type { StreamNodeConfig } from './node-options.js';
import { StreamNode, type StreamConsensus } from './stream-node.js';
import { TransferMetrics } from './transfer-metrics.js';
import { streamTrailSource } from './audit-trail-source.js';
import type { StreamCommand, StreamResult } from './commands.js';
import type { StreamMetadata } from './stream-metadata.js';
import type { StreamWal } from './wal.js';

export interface StreamNodeServiceDeps {
  options: StreamNodeConfig;
  consensus: StreamConsensus;
  store: ObjectStore;
  clock: Clock;
  rng: Rng;
  logger: Logger;
  /** Routes mounted before the stream API (e.g. Raft peer traffic). */
  peerRoutes?: DocumentedRoutes[];
  /** When given: GET /metrics, request durations, transfers, consensus position, store errors. */
  metrics?: BatonMetrics;
  /** When given and enabled: server spans of the API, and `traceparent` on the peer calls they make. */
  tracing?: Tracing;
  /** This member's durable audit store: the sealed records are projected into it, GET /v1/admin/audit reads it. */
  audit?: AuditStore;
}

/**
 * A running stream node as a host sees it: opens the WAL and recovers, starts the watcher,
 * serves the API, and registers itself in the metadata. Stopped in reverse: the listener first
 * (no new requests), then the watcher, then the sessions are closed and the WAL with them.
 */
export class StreamNodeService implements Lifecycle {
  private wal?: StreamWal;
  private engine?: StreamNode;
  private watcher?: HandoffWatcher;
  private server?: HttpServer;
  private registering?: AbortController;
  private transferMetrics?: TransferMetrics;
  private readiness?: ConsensusReadiness;
  private recent?: RecentTransfers;
  private lease?: NodeLease;
  private observer?: LivenessObserver;
  private maintenance?: MaintenanceScheduler;
  private pacer?: PlanPacer;
  private projection?: AuditTrailProjection<StreamMetadata, StreamCommand, StreamResult>;

  // Built by streamNodePlugin; the engine (node) is for the variant's tests.
  /** @internal */
  constructor(private readonly deps: StreamNodeServiceDeps) {}

  /**
   * The engine; only after start.
   *
   * @internal
   */
  get node(): StreamNode {
    if (!this.engine) throw new Error('stream node is not started');
    return this.engine;
  }

  /** The URL the API listens on; only after start. */
  get url(): string {
    if (!this.server) throw new Error('stream node is not started');
    return this.server.address.url;
  }

  async start(): Promise<void> {
    const { options, consensus, clock, rng, logger, metrics } = this.deps;
    const store = metrics ? countStoreErrors(this.deps.store, 'object-store', metrics) : this.deps.store;
    const log = logger.child({ node: options.self });
    // A damaged WAL fails the start (the error names the file, the byte and the repair command);
    // it is counted first, in baton_storage_corruptions_total{store="stream-wal"}.
    const onCorruption = metrics ? (error: CorruptRecordError) => metrics.storageCorruptions.inc({ store: error.store }) : undefined;
    this.wal =
      options.wal.kind === 'file' ? await FileWal.open(options.wal.dir, { onCorruption }) : new DiskWal(new MemoryWalDisk());
    this.engine = new StreamNode(consensus, store, this.wal, clock, log, {
      node: options.self,
      parkTimeoutMs: options.parkTimeoutMs,
      maxBufferedBytes: options.maxBufferedBytes,
      maxSegmentRecords: options.maxSegmentRecords,
      walCompactionBytes: options.walCompactionBytes,
    });
    await this.engine.start();
    this.watcher = new HandoffWatcher(this.engine);
    this.watcher.start();
    const audit = this.deps.audit && metrics ? countStoreErrors(this.deps.audit, 'audit-store', metrics) : this.deps.audit;
    if (audit) {
      // Every voter keeps its own copy of the trail: it stores what it owes, then acknowledges.
      this.projection = new AuditTrailProjection(consensus, streamTrailSource, audit, clock, log);
      this.projection.start();
    }
    const livenessMetrics = metrics ? new LivenessMetrics(metrics, consensus) : undefined;
    if (metrics) {
      this.transferMetrics = new TransferMetrics(consensus, metrics, clock, options.self);
      this.transferMetrics.start();
      this.engine.events = {
        takeover: (outcome) => livenessMetrics!.takeovers.inc({ outcome }),
        fenced: () => livenessMetrics!.fencedSessions.inc(),
      };
    }
    this.readiness = new ConsensusReadiness(consensus, clock, log);
    this.readiness.start();
    this.recent = metrics ? new RecentTransfers(metrics, clock) : undefined;
    const liveness = options.liveness;
    const lease = new NodeLease({
      self: options.self,
      boot: rng.hex(8),
      consensus,
      store,
      clock,
      logger: log,
      renewEveryMs: liveness.renewEveryMs,
      // The lease must lapse before the earliest Dead verdict the detector can reach.
      deadAfterMs: earliestDeadMs(liveness),
    });
    this.lease = lease;
    this.engine.acknowledgeable = (acceptedAt) => lease.acknowledgeable(acceptedAt);
    lease.start();
    this.observer = new LivenessObserver({
      self: options.self,
      consensus,
      store,
      clock,
      logger: log,
      options: liveness,
      events: { failover: (_node, trigger, result) => livenessMetrics?.failover(trigger, result) },
    });
    this.observer.start();
    this.maintenance = new MaintenanceScheduler({ consensus, clock, logger: log });
    this.maintenance.start();
    this.pacer = new PlanPacer({ consensus, clock, logger: log });
    this.pacer.start();
    if (!store.supports.conditionalPut) {
      log.warn('the object store has no conditional puts: failover cannot fence a lost node there, so automatic failover is off');
    }
    const observer = this.observer;
    if (options.dataPlane.anonymous !== 'none') {
      log.warn(
        { anonymous: options.dataPlane.anonymous },
        `the data API lets callers without a token ${options.dataPlane.anonymous === 'append' ? 'append and read' : 'read'} (dataPlane.anonymous): anyone who reaches this port may`,
      );
    }
    const app = createStreamApiApp({
      node: this.engine,
      readiness: this.readiness,
      recent: this.recent,
      tokens: new BearerTokens(options.tokens),
      clock,
      rng,
      logger: log,
      metrics,
      extraRoutes: this.deps.peerRoutes,
      tracing: this.deps.tracing,
      dataPlane: options.dataPlane,
      watchers: options.http.watchers,
      admin: {
        renewalAge: (node) => observer.lastRenewalMsAgo(node),
        onFailover: (_node, result) => livenessMetrics?.failover('operator', result),
        maintenanceBudget: {
          maxNodes: options.maintenance.maxNodesInMaintenance,
          ...(options.maintenance.oneValueOf ? { oneValueOf: options.maintenance.oneValueOf } : {}),
        },
        ...(audit ? { audit } : {}),
      },
    });
    this.server = createHttpServer({
      app,
      port: options.http.port,
      host: options.http.host,
      tls: options.http.tls,
      admission: options.http.admission,
      onRefusal: (reason) => metrics?.connectionRefusals.inc({ listener: 'streams', reason }),
      clock,
      logger: log,
      name: 'streams',
    });
    const bound = await this.server.listen();
    if (options.register) {
      this.registering = new AbortController();
      void this.register(options.address ?? bound.url, this.registering.signal);
    }
  }

  async stop(): Promise<void> {
    this.registering?.abort();
    this.readiness?.stop();
    await this.server?.stop();
    this.lease?.stop();
    this.observer?.stop();
    this.maintenance?.stop();
    this.pacer?.stop();
    this.watcher?.stop();
    this.projection?.stop();
    await this.projection?.settled();
    this.transferMetrics?.stop();
    this.recent?.stop();
    await this.engine?.stop();
  }

  /** Proposes this node's registration until it lands (there may be no leader yet at start). */
  private async register(address: string, signal: AbortSignal): Promise<void> {
    const { options, consensus, clock, logger } = this.deps;
    while (!signal.aborted) {
      try {
        const labels = Object.keys(options.labels).length > 0 ? { labels: options.labels } : {};
        const receipt = await consensus.propose({ type: 'register-node', node: options.self, address, slots: options.slots, ...labels });
        if (!receipt.result.ok) logger.error({ result: receipt.result }, 'node registration refused');
        else logger.info({ node: options.self, address, slots: options.slots, ...labels }, 'node registered');
        return;
      } catch (error) {
        logger.warn({ err: error }, 'node registration failed; retrying in a second');
        await clock.sleep(1_000, signal).catch(() => undefined);
      }
    }
  }
}
