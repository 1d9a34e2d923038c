import { testPeerAuthenticator } from '../../../support/peer-auth.js';
import Koa from 'koa';
import type Router from '@koa/router';
import type { Server } from 'node:http';
import { kvStateMachine, type KvCommand, type KvResult, type KvState } from '@baton/conformance/internal/kv-state-machine.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { SystemRng } from '@baton/kernel/internal/system-rng.js';
import { RaftConsensus } from '@baton/plugin-raft/internal/driver/raft-consensus.js';
import { DirectoryFiles } from '@baton/kernel/internal/byte-files.js';
import { FileRaftStorage } from '@baton/plugin-raft/internal/storage/file-storage.js';
import { HttpPeerTransport } from '@baton/plugin-raft/internal/transport-http.js';
import { MemoryLogger } from './silent-logger.js';

export interface HttpMember {
  id: string;
  server: Server;
  url: string;
  transport?: HttpPeerTransport;
  raft?: RaftConsensus<KvState, KvCommand, KvResult>;
}

/** Starts a koa server on a free loopback port whose raft routes can be swapped per incarnation. */
export async function listen(): Promise<{ server: Server; url: string; mount(router: Router | undefined): void }> {
  const app = new Koa();
  let router: Router | undefined;
  app.use(async (ctx, next) => {
    if (!router) {
      ctx.status = 503;
      return;
    }
    await (router.routes() as unknown as Koa.Middleware)(ctx, next);
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { server, url: `http://127.0.0.1:${address.port}`, mount: (r) => (router = r) };
}

/**
 * Real members: real HTTP on loopback, real clock, log files in a directory per member, so a
 * member can be stopped and started again on its files.
 */
export class HttpCluster {
  readonly clock = new SystemClock();
  readonly logger = new MemoryLogger();
  readonly servers = new Map<string, Awaited<ReturnType<typeof listen>>>();
  readonly members = new Map<string, { transport: HttpPeerTransport; raft: RaftConsensus<KvState, KvCommand, KvResult> }>();

  constructor(
    readonly ids: string[],
    readonly dirs: Record<string, string>,
    readonly cluster = 'http-test',
  ) {}

  async listenAll(): Promise<void> {
    for (const id of this.ids) this.servers.set(id, await listen());
  }

  peers(): Record<string, string> {
    return Object.fromEntries([...this.servers].map(([id, s]) => [id, s.url]));
  }

  async start(id: string): Promise<RaftConsensus<KvState, KvCommand, KvResult>> {
    const transport = new HttpPeerTransport({
      self: id,
      peers: Object.fromEntries(Object.entries(this.peers()).filter(([p]) => p !== id)),
      cluster: this.cluster,
      auth: testPeerAuthenticator(id, this.ids),
      clock: this.clock,
      logger: this.logger,
    });
    const raft = new RaftConsensus<KvState, KvCommand, KvResult>({
      self: id,
      voters: this.ids,
      cluster: this.cluster,
      machine: kvStateMachine,
      storage: new FileRaftStorage(new DirectoryFiles(this.dirs[id])),
      transport,
      clock: this.clock,
      rng: new SystemRng(),
      logger: this.logger,
      tickMs: 10,
      electionTicks: 10,
    });
    this.servers.get(id)!.mount(transport.router());
    await raft.start();
    this.members.set(id, { transport, raft });
    return raft;
  }

  async stop(id: string): Promise<void> {
    const m = this.members.get(id);
    if (!m) return;
    this.members.delete(id);
    this.servers.get(id)!.mount(undefined);
    await m.raft.stop();
    m.transport.stop();
  }

  async stopAll(): Promise<void> {
    for (const id of [...this.members.keys()]) await this.stop(id);
  }

  async close(): Promise<void> {
    await this.stopAll();
    for (const s of this.servers.values()) {
      s.server.closeAllConnections();
      await new Promise((resolve) => s.server.close(resolve));
    }
  }

  leader(): RaftConsensus<KvState, KvCommand, KvResult> | undefined {
    let best: RaftConsensus<KvState, KvCommand, KvResult> | undefined;
    for (const { raft } of this.members.values()) {
      const l = raft.leadership();
      if (l.isLeader && (!best || l.term > best.leadership().term)) best = raft;
    }
    return best;
  }

  /** Waits (real time) for a condition, with a deadline. */
  async until(cond: () => boolean, limitMs = 10_000, what = 'condition'): Promise<void> {
    const end = this.clock.now() + limitMs;
    while (!cond()) {
      if (this.clock.now() > end) throw new Error(`${what} did not hold within ${limitMs} ms`);
      await this.clock.sleep(5);
    }
  }
}
