import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeLoopbackPorts } from '@baton/cli/internal/local-cluster/free-ports.js';
import { eventually } from '../../hosts/eventually.js';
import {
  READY_TIMEOUT_MS,
  prepareMember,
  processOf,
  type ClusterMember,
  type NemesisCluster,
  type StoreOutage,
} from '../cluster.js';
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import { FAST } from '../../plugins/etcd/etcd-fixture.js';
import { firewallFor } from '../firewall.js';
import { callJson } from '../http-json.js';
import { memberIdentities } from '../member-identity.js';
import { peerCredentials } from '../peer-credentials.js';
import type { RunContext } from '../run-nemesis.js';

const ENTRY = fileURLToPath(new URL('../../../../hosts/stream-node/dist/main.js', import.meta.url));

/** Dead after 1.5 s of silence, failed over automatically 1.5 s later. */
export const LIVENESS = {
  renewEveryMs: 250,
  suspectAfterMs: 750,
  deadAfterMs: 1_500,
  autoFailoverAfterMs: 1_500,
};

export interface StreamCluster extends NemesisCluster {
  urls: Record<string, string>;
  token: string;
  /** The etcd cluster holding the metadata, when it is not the nodes' own Raft. */
  etcd?: EtcdCluster;
  close(): Promise<void>;
}

/** Where the metadata lives: the nodes' own Raft over HTTP, or a real 3-member etcd cluster. */
export type StreamMetadataStore = 'raft' | 'etcd';

/**
 * Stream nodes n1..nN as `baton up` runs them (hosts/stream-node/main.js, voters of one Raft over
 * HTTP on their own listeners, WAL and Raft log on files; or with `metadata: 'etcd'`, the
 * metadata on a real 3-member etcd cluster on free ports), sharing one file object store as
 * nodes sharing a bucket do. The nemesis may take that store away (`chmod 000`): every append
 * and flush then fails until it is back.
 */
export async function startStreamCluster(
  ctx: Pick<RunContext, 'seed' | 'members' | 'dir'>,
  metadata: StreamMetadataStore = 'raft',
  /** Node options over the ones below (other liveness thresholds, say), or each node's own (its labels). */
  nodeOptions: NodeOptions = {},
  /** Options of the nodes' own Raft over the ones below (a smaller snapshot interval, say). */
  raftOptions: Record<string, unknown> = {},
): Promise<StreamCluster> {
  const etcd = metadata === 'etcd' ? await EtcdCluster.start({ size: 3 }) : undefined;
  try {
    return await startNodes(ctx, etcd, nodeOptions, raftOptions);
  } catch (error) {
    await etcd?.close();
    throw error;
  }
}

/** Options over every node's defaults: the same for all, or per node id. */
export type NodeOptions = Record<string, unknown> | ((id: string) => Record<string, unknown>);

async function startNodes(
  ctx: Pick<RunContext, 'seed' | 'members' | 'dir'>,
  etcd: EtcdCluster | undefined,
  nodeOptions: NodeOptions,
  raftOptions: Record<string, unknown>,
): Promise<StreamCluster> {
  const ids = Array.from({ length: ctx.members }, (_, i) => `n${i + 1}`);
  const ports = await freeLoopbackPorts(ids.length);
  const urls = Object.fromEntries(ids.map((id, i) => [id, `http://127.0.0.1:${ports[i]}`]));
  const identities = memberIdentities(ids.length);
  const token = randomBytes(16).toString('hex');
  const peerAuth = peerCredentials(ids);
  const objects = join(ctx.dir, 'objects');
  await mkdir(objects, { recursive: true });
  // Shared by every node (one gid), setgid so what one node creates the next owner may write.
  if (identities) await chown(objects, 0, identities[0].gid);
  await chmod(objects, 0o2770);
  const members: ClusterMember[] = await Promise.all(
    ids.map((id, i) => {
      const dir = join(ctx.dir, id);
      return prepareMember({
        id,
        dir,
        ports: [ports[i]],
        entryPoint: ENTRY,
        identity: identities?.[i],
        // Group-writable files, so the shared object store stays writable by the next owner.
        umask: 0o002,
        config: {
          node: {
            self: id,
            address: urls[id],
            http: { port: ports[i], host: '127.0.0.1' },
            wal: { kind: 'file', dir: join(dir, 'wal') },
            tokens: [{ token, principal: 'operator', scopes: ['admin', 'stream:append', 'stream:read'] }],
            // Quicker than the defaults, so a run of seconds sees nodes turn Dead and fail
            // over; the operator's failover (on Dead) usually comes before the automatic one.
            liveness: LIVENESS,
            ...(typeof nodeOptions === 'function' ? nodeOptions(id) : nodeOptions),
          },
          dataDir: dir,
          ...(etcd
            ? {
                consensus: {
                  use: 'etcd-consensus',
                  options: {
                    endpoints: etcd.endpoints,
                    prefix: `nemesis-${ctx.seed}/`,
                    initialVoters: ids,
                    // A lost leader is replaced after its 2 s lease.
                    ...FAST,
                  },
                },
              }
            : {
                consensus: {
                  use: 'raft',
                  options: {
                    member: id,
                    voters: ids,
                    dataDir: join(dir, 'raft'),
                    snapshotInterval: 500,
                    snapshotRetain: 50,
                    ...raftOptions,
                  },
                },
                peerTransport: {
                  use: 'raft-http-transport',
                  options: { member: id, peers: urls },
                },
              }),
          peerAuth: peerAuth(id),
          objectStore: { use: 'fs-object-store', options: { dir: objects } },
          log: { level: 'info', pretty: false },
        },
      });
    }),
  );
  const { firewall, partitionsUnavailable } = await firewallFor(identities, `stream-${ctx.seed}`);
  const objectStoreOutage: StoreOutage = {
    label: 'object store',
    begin: () => chmod(objects, 0),
    end: () => chmod(objects, 0o2770),
  };
  const nodesListed = async (id: string): Promise<boolean> => {
    const r = await callJson(`${urls[id]}/v1/admin/nodes`, { token, timeoutMs: 1000 });
    return (
      r.kind === 'answer' &&
      r.status === 200 &&
      ids.every((n) => r.body.nodes.some((node: { id: string }) => node.id === n))
    );
  };
  for (const member of members) member.process.start();
  const cluster: StreamCluster = {
    members,
    urls,
    token,
    firewall,
    partitionsUnavailable,
    storeOutages: [objectStoreOutage],
    leader: () => leaderOf(urls),
    waitReady: (id) =>
      eventually(() => nodesListed(id), `stream node ${id} to answer`, READY_TIMEOUT_MS),
    etcd,
    close: async () => {
      await firewall?.heal();
      await objectStoreOutage.end();
      await Promise.all(members.map((m) => m.process.stop()));
      await etcd?.close();
    },
  };
  try {
    for (const id of ids) await processOf(members, id).whileRunning(cluster.waitReady(id));
  } catch (error) {
    await cluster.close();
    throw error;
  }
  return cluster;
}

/** One gauge of a node's /metrics (the first series of that name), or undefined. */
export async function gauge(url: string, name: string, token?: string): Promise<number | undefined> {
  const r = await callJson(`${url}/metrics`, { timeoutMs: 1_000, token });
  if (r.kind !== 'answer' || r.status !== 200) return undefined;
  const text = typeof r.body === 'object' && r.body?.detail ? String(r.body.detail) : '';
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : undefined;
}

/** The leader as the nodes' metrics say (consensus leadership gauge), best effort. */
async function leaderOf(urls: Record<string, string>): Promise<string | undefined> {
  const answers = await Promise.all(
    Object.entries(urls).map(async ([id, url]) =>
      (await gauge(url, 'baton_consensus_is_leader')) === 1 ? id : undefined,
    ),
  );
  return answers.find((id) => id !== undefined);
}
