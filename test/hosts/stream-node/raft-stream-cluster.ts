import { join } from 'node:path';
import type { Host } from '@baton/kernel/internal/host.js';
import type { StreamNodeService } from '@baton/stream-transfer/internal/stream-node-service.js';
import { freeLoopbackPort } from '@baton/conformance/internal/servers/redis-server.js';
import { FsObjectStore } from '@baton/plugin-fs/internal/fs-object-store.js';
import { startStreamNode } from '@baton/host-stream-node/internal/host.js';
import { testPeerAuth } from '../../support/peer-auth.js';

export const ADMIN_TOKEN = 'raft-cluster-admin';

/**
 * Stream nodes as `baton up` runs them: voters of one Raft over HTTP on fixed loopback ports,
 * WAL and Raft log on disk under `dir`, one shared file object store. `restart` stops every
 * node and starts them again on the same ports and data, as a cluster restart does.
 */
export class RaftStreamCluster {
  private nodes: { host: Host; node: StreamNodeService }[] = [];

  private constructor(
    readonly ids: string[],
    readonly urls: string[],
    private readonly configs: Record<string, unknown>[],
  ) {}

  static async start(dir: string, ids: string[]): Promise<RaftStreamCluster> {
    const ports = await Promise.all(ids.map(() => freeLoopbackPort()));
    const urls = ports.map((port) => `http://127.0.0.1:${port}`);
    const peers = Object.fromEntries(ids.map((id, i) => [id, urls[i]]));
    const objects = join(dir, 'objects');
    // Laid out once before the nodes start: two first starts at once race on its mkdir.
    await new FsObjectStore({ dir: objects }).start();
    const configs = ids.map((id, i) => ({
      node: {
        self: id,
        address: urls[i],
        http: { port: ports[i], host: '127.0.0.1' },
        wal: { kind: 'file', dir: join(dir, id, 'wal') },
        tokens: [{ token: ADMIN_TOKEN, principal: 'ops', scopes: ['admin', 'stream:append', 'stream:read'] }],
      },
      dataDir: join(dir, id),
      consensus: { use: 'raft', options: { member: id, voters: ids, dataDir: join(dir, id, 'raft'), tickMs: 10 } },
      peerTransport: { use: 'raft-http-transport', options: { member: id, peers } },
      peerAuth: testPeerAuth(id, ids),
      objectStore: { use: 'fs-object-store', options: { dir: objects } },
      log: { level: 'silent' },
    }));
    const cluster = new RaftStreamCluster(ids, urls, configs);
    await cluster.startAll();
    return cluster;
  }

  url(id: string): string {
    return this.urls[this.ids.indexOf(id)];
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.startAll();
  }

  async stop(): Promise<void> {
    const nodes = this.nodes;
    this.nodes = [];
    for (const { host } of [...nodes].reverse()) await host.stop();
  }

  private async startAll(): Promise<void> {
    // Started together: a Raft of several voters elects no leader until a majority is up.
    const started = await Promise.allSettled(this.configs.map((config) => startStreamNode(config)));
    this.nodes = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) {
      await this.stop();
      throw (failed as PromiseRejectedResult).reason;
    }
  }
}
