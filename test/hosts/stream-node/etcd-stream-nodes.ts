import { randomBytes } from 'node:crypto';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import { StreamClient } from '@baton/client';
import type { StreamCommand, StreamResult } from '@baton/stream-transfer/internal/commands.js';
import type { StreamMetadata } from '@baton/stream-transfer/internal/model.js';
import type { StreamNodeService } from '@baton/stream-transfer/internal/stream-node-service.js';
import type { Host } from '@baton/kernel/internal/host.js';
import { makeTempDir, type TempDir } from '@baton/testing/internal/temp-dir.js';
import { startStreamNode } from '@baton/host-stream-node/internal/host.js';
import type { EtcdConsensus } from '@baton/plugin-etcd/internal/etcd-consensus.js';
import { FAST } from '../../plugins/etcd/etcd-fixture.js';

export const TOKEN = 'etcd-admin';

export type StreamEtcdConsensus = EtcdConsensus<StreamMetadata, StreamCommand, StreamResult>;

export interface EtcdStreamNode {
  id: string;
  host: Host;
  node: StreamNodeService;
  consensus: StreamEtcdConsensus;
}

/**
 * Stream nodes whose metadata consensus is etcd, as a config file would compose them: each
 * names only the endpoints, prefix and voters (its member id defaults to its node id). They
 * share one object-store directory, as the nodes of a deployment share one bucket, and keep
 * their WALs in memory.
 */
export class EtcdStreamNodes {
  readonly nodes = new Map<string, EtcdStreamNode>();
  readonly prefix = `streams-${randomBytes(6).toString('hex')}/`;

  private constructor(
    private readonly endpoints: string[],
    private readonly ids: string[],
    private readonly objects: TempDir,
  ) {}

  static async start(endpoints: string[], ids: string[]): Promise<EtcdStreamNodes> {
    const group = new EtcdStreamNodes(endpoints, ids, await makeTempDir('etcd-stream-objects'));
    try {
      // One after another: fs-object-store's first start on a directory creates its layout and
      // two at once race on that mkdir.
      for (const id of ids) await group.startNode(id);
    } catch (error) {
      await group.stop();
      throw error;
    }
    return group;
  }

  config(id: string): Record<string, unknown> {
    return {
      node: {
        self: id,
        http: { port: 0 },
        wal: { kind: 'memory' },
        tokens: [{ token: TOKEN, principal: 'ops', scopes: ['admin', 'stream:append', 'stream:read'] }],
      },
      dataDir: null,
      consensus: {
        use: 'etcd-consensus',
        options: {
          endpoints: this.endpoints,
          prefix: this.prefix,
          initialVoters: this.ids,
          // A fault ends in seconds: a lost leader is replaced after its 2 s lease.
          ...FAST,
        },
      },
      objectStore: { use: 'fs-object-store', options: { dir: this.objects.path } },
      log: { level: process.env.ETCD_TEST_LOG ?? 'silent' },
    };
  }

  async startNode(id: string): Promise<EtcdStreamNode> {
    const { host, node } = await startStreamNode(this.config(id));
    const started = {
      id,
      host,
      node,
      consensus: host.get(METADATA_CONSENSUS) as StreamEtcdConsensus,
    };
    this.nodes.set(id, started);
    return started;
  }

  get(id: string): EtcdStreamNode {
    const node = this.nodes.get(id);
    if (!node) throw new Error(`no stream node ${id} in this group`);
    return node;
  }

  /** A client that knows every node and follows the 409 hints between them. */
  client(): StreamClient {
    return new StreamClient({
      nodes: [...this.nodes.values()].map((n) => n.node.url),
      token: TOKEN,
    });
  }

  async stop(): Promise<void> {
    await Promise.all([...this.nodes.values()].map((n) => n.host.stop()));
    this.nodes.clear();
    await this.objects.remove();
  }
}

/** Every record of `stream`, paging past the API limit. */
export async function readAll(client: StreamClient, stream: string): Promise<string[]> {
  const bodies: string[] = [];
  for (let from = 0; ;) {
    const page = await client.read(stream, from, 100);
    bodies.push(...page.records.map((r) => r.body));
    if (page.records.length === 0 || page.next === from) return bodies;
    from = page.next;
  }
}
