import { randomBytes } from 'node:crypto';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeLoopbackPorts } from '../../../cli/local-cluster/free-ports.js';
import { PEER_MEMBER_HEADER, PEER_SECRET_HEADER } from '../../../framework/http/peer-auth.js';
import { eventually } from '../../hosts/eventually.js';
import {
  READY_TIMEOUT_MS,
  prepareMember,
  type ClusterMember,
  type NemesisCluster,
  type StoreOutage,
} from '../cluster.js';
import { firewallFor } from '../firewall.js';
import { callJson } from '../http-json.js';
import { giveTo, memberIdentities } from '../member-identity.js';
import { peerCredentials } from '../peer-credentials.js';
import type { RunContext } from '../run-nemesis.js';

const ENTRY = fileURLToPath(new URL('../../../hosts/authority-node/main.js', import.meta.url));
const DATACENTERS = ['east', 'west', 'north', 'south', 'central'];

export interface AuthorityMember {
  id: string;
  datacenter: string;
  control: string;
  public: string;
}

export interface AuthorityCluster extends NemesisCluster {
  nodes: AuthorityMember[];
  token: string;
  /** The headers member `id` presents to its peers: lets the checks read a peer route as it. */
  peerHeaders(id: string): Record<string, string>;
  close(): Promise<void>;
}

/**
 * Authority nodes as `baton up --variant authority` runs them (hosts/authority-node/main.js, mode
 * ha, one member per datacenter, voters of one Raft over HTTP on their public servers, per-member
 * peer credentials), with Raft log, change feed and audit on files under each member's
 * directory. The nemesis may take one member's audit store away (`chmod 000`).
 */
export async function startAuthorityCluster(ctx: RunContext): Promise<AuthorityCluster> {
  const nodes: AuthorityMember[] = [];
  const ports = await freeLoopbackPorts(2 * ctx.members);
  for (let i = 0; i < ctx.members; i++) {
    const datacenter = DATACENTERS[i];
    nodes.push({
      id: `${datacenter}-1`,
      datacenter,
      public: `http://127.0.0.1:${ports[2 * i]}`,
      control: `http://127.0.0.1:${ports[2 * i + 1]}`,
    });
  }
  const ids = nodes.map((n) => n.id);
  const identities = memberIdentities(ids.length);
  const token = randomBytes(16).toString('hex');
  const peerAuth = peerCredentials(ids);
  const roster = Object.fromEntries(
    nodes.map((n) => [n.datacenter, { members: { [n.id]: { public: n.public } } }]),
  );
  const outages: StoreOutage[] = [];
  const members: ClusterMember[] = [];
  for (const [i, node] of nodes.entries()) {
    const dir = join(ctx.dir, node.id);
    const member = await prepareMember({
      id: node.id,
      dir,
      ports: [ports[2 * i], ports[2 * i + 1]],
      entryPoint: ENTRY,
      identity: identities?.[i],
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
          // Short feed pulls and re-probes, so a barrier is reached within a short run.
          feed: { pullIntervalMs: 100 },
          transfers: { reprobeMaxDelayMs: 500, probeTimeoutMs: 2_000 },
        },
        dataDir: dir,
        consensus: { use: 'raft', options: { member: node.id, voters: ids } },
        peerAuth: peerAuth(node.id),
        log: { level: 'info', pretty: false },
      },
    });
    const audit = join(dir, 'audit');
    await mkdir(audit, { recursive: true });
    await giveTo(identities?.[i], audit);
    outages.push({
      label: `audit store of ${node.id}`,
      begin: () => chmod(audit, 0),
      end: () => chmod(audit, 0o755),
    });
    members.push(member);
  }
  const { firewall, partitionsUnavailable } = await firewallFor(
    identities,
    `authority-${ctx.seed}`,
  );
  const control = (id: string) => nodes.find((n) => n.id === id)!.control;
  for (const member of members) member.process.start();
  const cluster: AuthorityCluster = {
    members,
    nodes,
    token,
    firewall,
    partitionsUnavailable,
    storeOutages: outages,
    peerHeaders: (id) => ({
      [PEER_MEMBER_HEADER]: id,
      [PEER_SECRET_HEADER]: String(peerAuth(id).secret),
    }),
    leader: async () => {
      for (const node of nodes) {
        const r = await callJson(`${node.control}/availability/v1/cluster`, {
          token,
          timeoutMs: 700,
        });
        if (r.kind === 'answer' && r.status === 200 && typeof r.body.leader === 'string')
          return r.body.leader;
      }
      return undefined;
    },
    waitReady: (id) =>
      eventually(
        async () => {
          const r = await callJson(`${control(id)}/availability/v1/members`, {
            token,
            timeoutMs: 1000,
          });
          return r.kind === 'answer' && r.status === 200;
        },
        `authority node ${id} to answer`,
        READY_TIMEOUT_MS,
      ),
    close: async () => {
      await firewall?.heal();
      for (const outage of outages) await outage.end();
      await Promise.all(members.map((m) => m.process.stop()));
    },
  };
  for (const id of ids) await cluster.waitReady(id);
  return cluster;
}
