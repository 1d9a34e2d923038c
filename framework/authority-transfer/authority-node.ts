import type { Middleware } from 'koa';
import type { AuditStore } from '../contracts/audit-store.js';
import type { Clock } from '../contracts/clock.js';
import type { IdentitySupplier } from '../contracts/identity-supplier.js';
import type { Logger } from '../contracts/logger.js';
import type { Rng } from '../contracts/rng.js';
import { createApiApp } from '../http/api-app.js';
import { BearerTokens } from '../http/auth.js';
import { HttpServer, type BoundAddress } from '../http/http-server.js';
import { serveRouter } from '../http/routes.js';
import type { Lifecycle } from '../kernel/plugin.js';
import { AuditProjection, type OwnershipConsensus } from './audit-projection.js';
import { ChangeFeed } from './change-feed.js';
import { createControlRouter } from './control-router.js';
import { FailoverCommands } from './failover-command.js';
import { FeedReplicator } from './feed-replicator.js';
import type { FrontierProbe } from './frontier-probe.js';
import { HttpFrontierProbe } from './http-frontier-probe.js';
import { MemberTracker } from './member-tracker.js';
import type { AuthorityNodeOptions } from './node-options.js';
import { PlannedTransferEngine } from './planned-transfer-engine.js';
import { createPublicRouter } from './public-router.js';
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
  peerRoutes?: readonly Middleware[];
}

/**
 * One member of the authority-transfer variant: its change feed, member tracker, and in mode ha
 * the planned-transfer engine, audit projection, fence and failover command, served on a
 * control listener (its own port) and a public server (peer traffic, writes). Started after
 * the consensus and audit store it uses, stopped before them.
 */
export class AuthorityNode implements Lifecycle {
  readonly roster: Roster;
  readonly datacenter: string;
  readonly feed: ChangeFeed;
  readonly tracker: MemberTracker;
  readonly engine?: PlannedTransferEngine;
  readonly projection?: AuditProjection;
  readonly fence?: WriteFence;
  readonly replicator: FeedReplicator;
  private readonly control: HttpServer;
  private readonly publicServer: HttpServer;

  constructor(private readonly deps: AuthorityNodeDeps) {
    const { options, clock, log } = deps;
    this.roster = new Roster(options.roster);
    this.datacenter = this.roster.datacenterOfMember(options.self)!;
    this.feed = new ChangeFeed(options.self);
    this.tracker = new MemberTracker(clock, this.roster, options.self, options.tracker);
    this.replicator = new FeedReplicator(this.feed, this.roster, this.tracker, clock, log, {
      intervalMs: options.feed.pullIntervalMs,
      timeoutMs: options.feed.pullTimeoutMs,
      batch: options.feed.batch,
      token: options.peerToken,
    });
    let ha: Parameters<typeof createControlRouter>[0]['ha'];
    if (options.mode === 'ha') {
      const { consensus, audit } = deps;
      if (!consensus || !audit) throw new Error('mode ha needs a MetadataConsensus and an AuditStore');
      const self = consensus.leadership().self;
      if (self !== options.self) {
        throw new Error(`the consensus member is ${self} but the node is configured as ${options.self}: they must match`);
      }
      this.projection = new AuditProjection(consensus, audit, clock, log);
      const probe = deps.probe ?? new HttpFrontierProbe(this.roster, clock, { token: options.peerToken, tracker: this.tracker });
      this.engine = new PlannedTransferEngine(
        { consensus, audit, projection: this.projection, probe, feed: this.feed, clock, log },
        {
          budgetMs: options.transfers.budgetMs,
          probeTimeoutMs: options.transfers.probeTimeoutMs,
          schedule: { initialDelayMs: options.transfers.reprobeInitialDelayMs, maxDelayMs: options.transfers.reprobeMaxDelayMs },
          abandonedWindow: options.transfers.abandonedWindow,
        },
      );
      this.fence = new WriteFence(consensus, this.feed, this.datacenter);
      ha = { engine: this.engine, failover: new FailoverCommands(consensus, this.tracker), consensus };
    }
    const tokens = new BearerTokens(options.tokens);
    const app = () => createApiApp({ clock, rng: deps.rng, logger: log, tokens, mappers: [transferProblemMapper] });
    const controlApp = app().use(serveRouter(createControlRouter({ identity: deps.identity, tracker: this.tracker, ha })));
    const publicApp = app().use(serveRouter(createPublicRouter({ feed: this.feed, identity: deps.identity, fence: this.fence })));
    for (const routes of deps.peerRoutes ?? []) publicApp.use(routes);
    this.control = new HttpServer({ app: controlApp, ...options.control, clock, logger: log, name: 'control' });
    this.publicServer = new HttpServer({ app: publicApp, ...options.public, clock, logger: log, name: 'public' });
  }

  get controlAddress(): BoundAddress {
    return this.control.address;
  }

  get publicAddress(): BoundAddress {
    return this.publicServer.address;
  }

  async start(): Promise<void> {
    await this.publicServer.start();
    await this.control.start();
    this.projection?.start();
    this.replicator.start();
  }

  async stop(): Promise<void> {
    this.replicator.stop();
    this.engine?.stop();
    this.projection?.stop();
    await this.control.stop();
    await this.publicServer.stop();
  }
}
