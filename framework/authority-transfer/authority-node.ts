import { join } from 'node:path';
import Router from '@koa/router';
import { CorruptRecordError, type AuditStore, type Clock, type IdentitySupplier, type Logger, type Rng } from '@baton/contracts';
import {
  createApiApp,
  type PeerAuthenticator,
  BearerTokens,
  HttpServer,
  type BoundAddress,
  BatonMetrics,
  metricsRouter,
  type Tracing,
  consensusReadingOf,
  countStoreErrors,
  ApiDocument,
  openApiRouter,
  serveRouter,
  type DocumentedRoutes,
  EventStreams,
} from '@baton/http';
import { type Lifecycle, DirectoryFiles } from '@baton/kernel';
import {
  healthRouter,
  ConsensusReadiness,
  servingReadiness,
  type Readiness,
  RecentTransfers,
  consensusAdminRouter,
} from '@baton/cluster';
import { dashboardRouter } from '@baton/dashboard';
import { AuditProjection, type OwnershipConsensus } from './audit-projection.js';
import { ChangeFeed } from './change-feed.js';
import { AUTHORITY_CLUSTER_PATH, authorityClusterRouter, authorityMemberReportRouter, type AuthorityClusterDeps } from './cluster-view.js';
import { ADMIN_READ_SCOPE, ADMIN_WRITE_SCOPE, createControlRouter } from './control-router.js';
import { FailoverCommands } from './failover-command.js';
import { AppliedWaits } from './applied-waits.js';
import { FeedReplicas } from './feed-replicas.js';
import { ClockSkew } from './clock-skew.js';
import { FeedReplicator } from './feed-replicator.js';
import { FreezeAcknowledger } from './freeze-acknowledger.js';
import { HomeCatchUp } from './home-catch-up.js';
import { CatchUpViews } from './catch-up-view.js';
import { RosterSourcePositions } from './source-positions.js';
import type { FrontierProbe } from './frontier-probe.js';
import { HttpFrontierProbe } from './http-frontier-probe.js';
import { MemberTracker } from './member-tracker.js';
import type { AuthorityNodeOptions } from './node-options.js';
import { TransferDriver } from './transfer-driver.js';
import { createPublicRouter } from './public-router.js';
import { AuthorityOwnershipFeed } from './authority-ownership-feed.js';
import { Roster } from './roster.js';
import { transferProblemMapper } from './transfer-problems.js';
import { WriteFence } from './write-fence.js';

export interface AuthorityNodeDeps {
  options: AuthorityNodeOptions;
  clock: Clock;
  rng: Rng;
  log: Logger;
  identity: IdentitySupplier;
  /** Mode ha only. */
  consensus?: OwnershipConsensus;
  audit?: AuditStore;
  /** Replaces the HTTP probe (tests, simulation). */
  probe?: FrontierProbe;
  /** Extra peer routing on the public server (a consensus transport's router, for instance). */
  peerRoutes?: readonly DocumentedRoutes[];
  /**
   * How peers authenticate on the public server's peer routes. Without it (or insecure) those
   * routes take a bearer token with the "peer" scope and trust the member a request names.
   */
  peerAuth?: PeerAuthenticator;
  /** The host's metrics; the node keeps a registry of its own when the host has none. */
  metrics?: BatonMetrics;
  /** When given and enabled: server spans of both listeners, and `traceparent` on the peer calls they make. */
  tracing?: Tracing;
}

/** The routers of one listener and the OpenAPI document that describes them. */
export interface ListenerApi {
  document: ApiDocument;
  routers: Router[];
}

/**
 * One member of the authority-transfer variant: its durable change feed and replicas of its
 * peers' feeds, member tracker, and in mode ha the planned-transfer engine, audit projection,
 * fence and failover command, served on a control listener (its own port) and a public server
 * (peer traffic, writes). Each listener serves GET /openapi.json; the control listener also
 * serves GET /metrics. Started after the consensus and audit store it uses, stopped before them.
 */
export class AuthorityNode implements Lifecycle {
  // A host reads the addresses, readiness and metrics; the engine's parts, marked @internal, are
  // for the variant's plugin that builds the member and for its tests.
  /** @internal */
  readonly roster: Roster;
  readonly datacenter: string;
  /** @internal */
  readonly feed: ChangeFeed;
  /** @internal */
  readonly replicas: FeedReplicas;
  /**
   * The waiting probes parked on this member's replicas (answered on their apply).
   *
   * @internal
   */
  readonly appliedWaits: AppliedWaits;
  /** @internal */
  readonly tracker: MemberTracker;
  /** @internal */
  readonly engine?: TransferDriver;
  /** @internal */
  readonly projection?: AuditProjection;
  /** @internal */
  readonly fence?: WriteFence;
  /**
   * The new home's side of a planned move's barrier (mode ha).
   *
   * @internal
   */
  readonly catchUp?: HomeCatchUp;
  /** @internal */
  readonly freezes?: FreezeAcknowledger;
  /** @internal */
  readonly replicator: FeedReplicator;
  /**
   * What this member knows of its peers' clocks, read off its feed pulls (clock-skew.ts).
   *
   * @internal
   */
  readonly clocks: ClockSkew;
  readonly metrics: BatonMetrics;
  /** @internal */
  readonly controlApi: ListenerApi;
  /** @internal */
  readonly publicApi: ListenerApi;
  /** What /readyz answers on both listeners: the ownership consensus in mode ha, serving in mode dc. */
  readonly readiness: Readiness;
  private readonly consensusReadiness?: ConsensusReadiness;
  private readonly recent: RecentTransfers;
  private readonly control: HttpServer;
  private readonly publicServer: HttpServer;

  /** @internal */
  constructor(private readonly deps: AuthorityNodeDeps) {
    const { options, clock, log } = deps;
    this.roster = new Roster(options.roster);
    this.datacenter = this.roster.datacenterOfMember(options.self)!;
    const publicUrlsOf = (datacenter: string) => this.roster.membersOf(datacenter).map((m) => m.publicUrl);
    this.metrics = deps.metrics ?? new BatonMetrics({ labels: { member: options.self } });
    const peers = this.roster.allMembers().map((m) => m.id).filter((id) => id !== options.self);
    const dir = options.feed.dir;
    this.feed = new ChangeFeed(options.self, {
      files: dir ? new DirectoryFiles(join(dir, 'own')) : undefined,
      mintIncarnation: () => deps.rng.hex(8),
      peers,
      maxRetained: options.feed.maxRetained,
      segmentEntries: options.feed.segmentEntries,
      log,
    });
    this.replicas = new FeedReplicas(options.self, {
      filesFor: dir ? (origin) => new DirectoryFiles(join(dir, 'replicas', encodeURIComponent(origin))) : undefined,
      retain: options.feed.replicaRetain,
      segmentEntries: options.feed.segmentEntries,
    });
    this.appliedWaits = new AppliedWaits(this.replicas, clock);
    this.tracker = new MemberTracker(clock, this.roster, options.self, options.tracker);
    this.clocks = new ClockSkew(options.transfers.maxClockSkewMs ?? Math.floor(options.transfers.expiryGraceMs / 2), clock, (excess, reading) => {
      if (excess) {
        const { peer, boundMs } = excess;
        log.error({ peer, offsetMs: Math.round(excess.offsetMs), uncertaintyMs: Math.round(excess.uncertaintyMs), maxClockSkewMs: boundMs }, "a peer's clock is further from this member's than transfers.maxClockSkewMs: this member drives no new planned transfer until they agree");
      } else {
        log.info({ peer: reading.peer, offsetMs: Math.round(reading.offsetMs) }, "the peer's clock is back within transfers.maxClockSkewMs");
      }
    });
    this.metrics.observePeerClocks(() => this.clocks.all());
    this.replicator = new FeedReplicator(options.self, this.replicas, this.roster, this.tracker, clock, log, {
      intervalMs: options.feed.pullIntervalMs,
      timeoutMs: options.feed.pullTimeoutMs,
      batch: options.feed.batch,
      token: options.peerToken,
      headers: deps.peerAuth?.outboundHeaders(),
      clocks: this.clocks,
    });
    let ha: Parameters<typeof createControlRouter>[0]['ha'];
    if (options.mode === 'ha') {
      const { consensus } = deps;
      if (!consensus || !deps.audit) throw new Error('mode ha needs a MetadataConsensus and an AuditStore');
      const self = consensus.leadership().self;
      if (self !== options.self) {
        throw new Error(`the consensus member is ${self} but the node is configured as ${options.self}: they must match`);
      }
      const audit = countStoreErrors(deps.audit, 'audit', this.metrics);
      this.projection = new AuditProjection(consensus, audit, clock, log);
      const probe = deps.probe ?? new HttpFrontierProbe(this.roster, clock, {
        token: options.peerToken,
        headers: deps.peerAuth?.outboundHeaders(),
        tracker: this.tracker,
        own: {
          member: options.self,
          read: (origin, probe) =>
            probe.waitFor
              ? this.appliedWaits.wait(origin, probe.waitFor.serial, probe.waitFor.waitMs, { requester: options.self, signal: probe.signal })
              : Promise.resolve(this.replicas.applied(origin.member)),
        },
      });
      this.engine = new TransferDriver(
        {
          consensus,
          audit,
          projection: this.projection,
          probe,
          feed: this.feed,
          clock,
          log,
          metrics: this.metrics,
          sources: new RosterSourcePositions(this.roster, this.feed, clock, { token: options.peerToken, headers: deps.peerAuth?.outboundHeaders() }),
          clocks: this.clocks,
        },
        {
          budgetMs: options.transfers.budgetMs,
          probeTimeoutMs: options.transfers.probeTimeoutMs,
          schedule: { initialDelayMs: options.transfers.reprobeInitialDelayMs, maxDelayMs: options.transfers.reprobeMaxDelayMs },
          abandonedWindow: options.transfers.abandonedWindow,
          freezeBudgetMs: options.transfers.freezeBudgetMs,
          expiryGraceMs: options.transfers.expiryGraceMs,
          resolution: options.resolution,
        },
      );
      const catchUp = new HomeCatchUp(options.self, this.datacenter, this.replicas, consensus, clock, log, {
        onBehind: () => this.replicator.pullSoon(),
        onRefused: () => this.metrics.homeCatchUpRefusals.inc(),
        homeMembers: this.roster.membersOf(this.datacenter).map((m) => m.id),
      });
      this.catchUp = catchUp;
      this.metrics.observeHomesCatchingUp(() => catchUp.catchingUp);
      this.fence = new WriteFence(consensus, this.feed, this.datacenter, catchUp, publicUrlsOf);
      this.freezes = new FreezeAcknowledger(consensus, this.feed, this.datacenter, clock, log, () => this.replicator.pullSoon());
      const catchUps = new CatchUpViews(options.self, this.feed, this.replicas, (datacenter) => this.roster.membersOf(datacenter).map((m) => m.id));
      ha = { engine: this.engine, failover: new FailoverCommands(consensus, this.tracker, this.roster, {
          clock,
          loss: { self: options.self, replicas: this.replicas, probe, timeoutMs: options.transfers.probeTimeoutMs },
        }), consensus, audit, catchUps };
      const engine = this.engine;
      this.metrics.observeTransfersInFlight(() => engine.registry.size);
      this.metrics.observeConsensus(consensusReadingOf(consensus));
      this.consensusReadiness = new ConsensusReadiness(consensus, clock, log);
    }
    this.readiness = this.consensusReadiness ?? servingReadiness;
    this.recent = new RecentTransfers(this.metrics, clock);
    // Mode dc has no consensus, so no position to report: its members serve no picture.
    const cluster: AuthorityClusterDeps | undefined =
      ha && this.engine && this.catchUp
        ? {
            self: options.self,
            roster: this.roster,
            tracker: this.tracker,
            consensus: ha.consensus,
            engine: this.engine,
            readiness: this.readiness,
            recent: this.recent,
            clock,
            catchUp: this.catchUp,
            controlAddress: () => this.controlUrl(),
          }
        : undefined;
    const tokens = new BearerTokens(options.tokens);
    const app = (listener: string) =>
      createApiApp({ clock, rng: deps.rng, logger: log, tokens, mappers: [transferProblemMapper], metrics: this.metrics, listener, tracing: deps.tracing });

    const controlDocument = new ApiDocument({
      title: 'Peryx availability control API',
      version: '1',
      description: `Planned authority transfers, the raw transfer command, ownership and the member tracker (member ${options.self}).`,
      tags: {
        transfers: 'Planned transfers: start, follow, cancel',
        commands: 'The raw transfer command a failover commits',
        authorities: 'Homes, epochs and the audit of each authority',
        members: 'The member tracker',
        consensus: 'Voters, leadership and backups of the ownership consensus',
        cluster: 'The picture of the cluster the CLI and the dashboard read',
        health: 'Probes for load balancers and orchestrators',
        dashboard: 'The web dashboard',
        operations: 'Metrics and this document',
      },
    });
    const controlRouters = [
      healthRouter(options.self, this.readiness, controlDocument),
      ...(cluster ? [authorityClusterRouter(cluster, controlDocument)] : []),
      dashboardRouter(controlDocument, { clusterPath: AUTHORITY_CLUSTER_PATH }),
      createControlRouter({ identity: deps.identity, tracker: this.tracker, ha, datacenters: () => this.roster.datacenters() }, controlDocument),
      ...(ha
        ? [
            consensusAdminRouter(ha.consensus, controlDocument, {
              prefix: '/availability/v1',
              readScope: ADMIN_READ_SCOPE,
              writeScope: ADMIN_WRITE_SCOPE,
              tags: ['consensus'],
              variant: 'authority-transfer',
              self: options.self,
              consensusName: ha.consensus.constructor.name,
            }),
          ]
        : []),
      metricsRouter(this.metrics, controlDocument),
      openApiRouter(controlDocument),
    ];
    this.controlApi = { document: controlDocument, routers: controlRouters };
    const controlApp = app('control');
    for (const router of controlRouters) controlApp.use(serveRouter(router));

    const publicDocument = new ApiDocument({
      title: 'Peryx public API',
      version: '1',
      description: `Peer traffic (change feeds, applied serials) and fenced writes (member ${options.self}).`,
      tags: {
        authorities: 'Fenced writes to an authority at its home',
        peers: "Members reading each other's feeds",
        internal: 'Member-to-member traffic (feeds, Raft); not for clients',
        cluster: "This member's own report",
        health: 'Probes for load balancers and orchestrators',
        operations: 'This document',
      },
    });
    const publicRouters = [
      healthRouter(options.self, this.readiness, publicDocument),
      ...(cluster ? [authorityMemberReportRouter(cluster, publicDocument)] : []),
      createPublicRouter(
        {
          clock,
          feed: this.feed,
          replicas: this.replicas,
          waits: this.appliedWaits,
          identity: deps.identity,
          fence: this.fence,
          peerAuth: deps.peerAuth,
          ...(ha ? { ownership: new AuthorityOwnershipFeed(ha.consensus, publicUrlsOf, new EventStreams(clock, options.public.watchers)) } : {}),
        },
        publicDocument,
      ),
      openApiRouter(publicDocument),
    ];
    this.publicApi = { document: publicDocument, routers: publicRouters };
    const publicApp = app('public');
    for (const router of publicRouters) publicApp.use(serveRouter(router));
    for (const peer of deps.peerRoutes ?? []) {
      publicApp.use(peer.routes);
      for (const operation of peer.operations) publicDocument.operation(operation);
    }
    const refusals = (listener: string) => (reason: string) => this.metrics?.connectionRefusals.inc({ listener, reason });
    this.control = new HttpServer({ app: controlApp, ...options.control, clock, logger: log, name: 'control', onRefusal: refusals('control') });
    const { watchers: _bounds, ...publicListener } = options.public;
    this.publicServer = new HttpServer({ app: publicApp, ...publicListener, clock, logger: log, name: 'public', onRefusal: refusals('public') });
  }

  get controlAddress(): BoundAddress {
    return this.control.address;
  }

  /** The control listener's URL once it listens; undefined before. */
  private controlUrl(): string | undefined {
    try {
      return this.control.address.url;
    } catch {
      return undefined;
    }
  }

  get publicAddress(): BoundAddress {
    return this.publicServer.address;
  }

  async start(): Promise<void> {
    // The feed is recovered before anything can read its serial or append to it. Damage found
    // there fails the start; it is counted first (baton_storage_corruptions_total).
    try {
      await this.feed.open();
      await this.replicas.open(this.roster.allMembers().map((m) => m.id));
    } catch (error) {
      if (error instanceof CorruptRecordError) this.metrics.storageCorruptions.inc({ store: error.store });
      throw error;
    }
    await this.publicServer.start();
    await this.control.start();
    this.projection?.start();
    this.freezes?.start();
    this.catchUp?.start();
    this.replicator.start();
    this.consensusReadiness?.start();
  }

  async stop(): Promise<void> {
    this.consensusReadiness?.stop();
    this.recent.stop();
    this.replicator.stop();
    this.engine?.stop();
    this.freezes?.stop();
    this.catchUp?.stop();
    this.projection?.stop();
    // Parked probes answer now rather than hold the public listener's drain.
    this.appliedWaits.close();
    await this.control.stop();
    await this.publicServer.stop();
    await this.replicas.close();
    await this.feed.close();
  }
}
