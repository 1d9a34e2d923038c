import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeLoopbackPorts } from '@baton/cli/internal/local-cluster/free-ports.js';
import { PEER_MEMBER_HEADER, PEER_SECRET_HEADER } from '@baton/http/internal/peer-auth.js';
import { prepareMember, type ClusterMember } from '../cluster.js';
import type { ProcessIdentity } from '../member-identity.js';
import { peerCredentials } from '../peer-credentials.js';

const ENTRY = fileURLToPath(new URL('../../../../hosts/authority-node/dist/main.js', import.meta.url));
const DATACENTERS = ['east', 'west', 'north', 'south', 'central'];

/** Where one authority node lives: its id, its datacenter and the URLs of its two servers. */
export interface AuthorityMember {
  id: string;
  datacenter: string;
  control: string;
  public: string;
}

export interface AuthorityMembers {
  nodes: AuthorityMember[];
  /** Each node's process, prepared (config written) but not started, in the order of `nodes`. */
  members: ClusterMember[];
  /** The operator's bearer token (admin and authority writes). */
  token: string;
  /** The headers member `id` presents to its peers: lets a test read a peer route as it. */
  peerHeaders(id: string): Record<string, string>;
}

/**
 * Authority nodes as `baton up --variant authority` runs them (hosts/authority-node/main.js,
 * mode ha, one member per datacenter — east, west, north, then south and central — voters of one
 * Raft over HTTP on their public servers, per-member peer credentials), with Raft log, change
 * feed and audit on files under each member's directory `<dir>/<id>`. `feed` and `transfers` are
 * the node options a test shortens so a barrier is reached within it.
 */
export async function prepareAuthorityMembers(options: {
  dir: string;
  count: number;
  feed: Record<string, unknown>;
  transfers: Record<string, unknown>;
  /** A uid per member, to firewall it (see member-identity.ts); the runner's own otherwise. */
  identities?: ProcessIdentity[];
  /** Options of the members' Raft beyond who the voters are (a smaller snapshot interval, say). */
  raft?: Record<string, unknown>;
}): Promise<AuthorityMembers> {
  if (options.count > DATACENTERS.length)
    throw new RangeError(
      `at most ${DATACENTERS.length} authority members, asked for ${options.count}`,
    );
  const ports = await freeLoopbackPorts(2 * options.count);
  const nodes: AuthorityMember[] = DATACENTERS.slice(0, options.count).map((datacenter, i) => ({
    id: `${datacenter}-1`,
    datacenter,
    public: `http://127.0.0.1:${ports[2 * i]}`,
    control: `http://127.0.0.1:${ports[2 * i + 1]}`,
  }));
  const ids = nodes.map((n) => n.id);
  const token = randomBytes(16).toString('hex');
  const peerAuth = peerCredentials(ids);
  const roster = Object.fromEntries(
    nodes.map((n) => [n.datacenter, { members: { [n.id]: { public: n.public } } }]),
  );
  const members: ClusterMember[] = [];
  for (const [i, node] of nodes.entries()) {
    const dir = join(options.dir, node.id);
    members.push(
      await prepareMember({
        id: node.id,
        dir,
        ports: [ports[2 * i], ports[2 * i + 1]],
        entryPoint: ENTRY,
        identity: options.identities?.[i],
        config: {
          node: {
            self: node.id,
            mode: 'ha',
            roster,
            public: { port: ports[2 * i], host: '127.0.0.1' },
            control: { port: ports[2 * i + 1], host: '127.0.0.1' },
            tokens: [
              {
                token,
                principal: 'operator',
                scopes: ['admin:write', 'admin:read', 'authority:write'],
              },
            ],
            feed: options.feed,
            transfers: options.transfers,
          },
          dataDir: dir,
          consensus: { use: 'raft', options: { member: node.id, voters: ids, ...options.raft } },
          peerAuth: peerAuth(node.id),
          log: { level: 'info', pretty: false },
        },
      }),
    );
  }
  return {
    nodes,
    members,
    token,
    peerHeaders: (id) => ({
      [PEER_MEMBER_HEADER]: id,
      [PEER_SECRET_HEADER]: String(peerAuth(id).secret),
    }),
  };
}
