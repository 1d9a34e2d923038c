import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { eventually } from '../../hosts/eventually.js';
import { READY_TIMEOUT_MS, processOf, type NemesisCluster, type StoreOutage } from '../cluster.js';
import { firewallFor } from '../firewall.js';
import { callJson } from '../http-json.js';
import { giveTo, memberIdentities } from '../member-identity.js';
import type { RunContext } from '../run-nemesis.js';
import { prepareAuthorityMembers, type AuthorityMember } from './authority-members.js';

export type { AuthorityMember } from './authority-members.js';

export interface AuthorityCluster extends NemesisCluster {
  nodes: AuthorityMember[];
  token: string;
  /** The headers member `id` presents to its peers: lets the checks read a peer route as it. */
  peerHeaders(id: string): Record<string, string>;
  close(): Promise<void>;
}

/**
 * Authority nodes as `baton up --variant authority` runs them (see authority-members.ts), each
 * under a uid of its own so partitions can be made. The nemesis may take one member's audit
 * store away (`chmod 000`).
 */
export async function startAuthorityCluster(
  ctx: RunContext,
  /** Options of the members' Raft beyond who the voters are. */
  raft?: Record<string, unknown>,
): Promise<AuthorityCluster> {
  const identities = memberIdentities(ctx.members);
  const { nodes, members, token, peerHeaders } = await prepareAuthorityMembers({
    dir: ctx.dir,
    count: ctx.members,
    identities,
    // Short feed pulls and re-probes, so a barrier is reached within a short run.
    feed: { pullIntervalMs: 100 },
    transfers: { reprobeMaxDelayMs: 500, probeTimeoutMs: 2_000 },
    raft,
  });
  const ids = nodes.map((n) => n.id);
  const outages: StoreOutage[] = [];
  for (const [i, member] of members.entries()) {
    const audit = join(member.dir, 'audit');
    await mkdir(audit, { recursive: true });
    await giveTo(identities?.[i], audit);
    outages.push({
      label: `audit store of ${member.id}`,
      begin: () => chmod(audit, 0),
      end: () => chmod(audit, 0o755),
    });
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
    peerHeaders,
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
  for (const id of ids) await processOf(members, id).whileRunning(cluster.waitReady(id));
  return cluster;
}
