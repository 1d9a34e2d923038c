import { testPeerAuth } from '../../support/peer-auth.js';
import { randomBytes } from 'node:crypto';
import { AUTHORITY_NODE } from '@baton/authority-transfer/internal/plugins.js';
import type { OwnershipConsensus } from '@baton/authority-transfer/internal/audit-projection.js';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import type { Host } from '@baton/kernel/internal/host.js';
import type { RedisServer } from '@baton/conformance/internal/servers/redis-server.js';
import { startAuthorityNode } from '@baton/host-authority-node/internal/host.js';
import { TcpCut } from '../../plugins/etcd/tcp-cut.js';
import { loopbackMembers } from './loopback-members.js';

export interface RedisAuthorityMember {
  id: string;
  datacenter: string;
  host: Host;
  consensus: OwnershipConsensus;
  /** The Redis key prefix of this member's audit store. */
  keyPrefix: string;
  control: string;
  public: string;
}

export interface RedisAuthorityCluster {
  members: RedisAuthorityMember[];
  /** The network path to the last member's public server, as its peers reach it. */
  cut: TcpCut;
  stop(): Promise<void>;
}

/**
 * One authority node per datacenter, voters of one Raft over their public servers, each with
 * its audit in the same Redis under its own key prefix (as members sharing one Redis deployment
 * do). The roster reaches the last member through a TCP relay the test can cut, so a catch-up
 * probe toward it can be held back without touching the node itself; Raft traffic goes direct.
 */
export async function startRedisAuthorityCluster(
  redis: RedisServer,
  datacenters: string[],
): Promise<RedisAuthorityCluster> {
  const loopback = await loopbackMembers(datacenters);
  const { ids, urls, peers } = loopback;
  const cut = await TcpCut.open(urls[urls.length - 1]);
  const roster = loopback.roster((i) => (i === ids.length - 1 ? cut.url : urls[i]));
  const run = randomBytes(4).toString('hex');
  const members: RedisAuthorityMember[] = [];
  const stop = async () => {
    for (const member of [...members].reverse()) await member.host.stop();
    await cut.close();
  };
  try {
    // Started together: a Raft of several voters elects no leader until a majority is up.
    const started = await Promise.allSettled(
      ids.map((id, i) => {
        const keyPrefix = `e2e-${run}:${id}:`;
        return startAuthorityNode({
          node: {
            ...loopback.node(i, roster),
            transfers: { reprobeInitialDelayMs: 10, reprobeMaxDelayMs: 50 },
          },
          consensus: { use: 'raft', options: { member: id, voters: ids } },
          peerTransport: { use: 'raft-http-transport', options: { member: id, peers } },
          peerAuth: testPeerAuth(id, ids),
          auditStore: {
            use: 'redis-audit-store',
            options: {
              url: redis.url,
              keyPrefix,
              connectTimeoutMs: 1_000,
              commandTimeoutMs: 1_000,
            },
          },
          dataDir: null,
          log: { level: 'silent' },
        }).then(({ host }) => ({ id, host, keyPrefix, i }));
      }),
    );
    for (const outcome of started) {
      if (outcome.status === 'rejected') continue;
      const { id, host, keyPrefix, i } = outcome.value;
      const node = host.get(AUTHORITY_NODE);
      members.push({
        id,
        datacenter: datacenters[i],
        host,
        consensus: host.get(METADATA_CONSENSUS) as OwnershipConsensus,
        keyPrefix,
        control: node.controlAddress.url,
        public: node.publicAddress.url,
      });
    }
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  } catch (error) {
    await stop();
    throw error;
  }
  return { members, cut, stop };
}
