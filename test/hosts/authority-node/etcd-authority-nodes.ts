import { testPeerAuthForRoster } from '../../support/peer-auth.js';
import { randomBytes } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import type { OwnershipConsensus } from '@baton/authority-transfer/internal/audit-projection.js';
import type { AuthorityNode } from '@baton/authority-transfer/internal/authority-node.js';
import {
  FRONTIER_PROBE,
  type FrontierProbe,
} from '@baton/authority-transfer/internal/frontier-probe.js';
import { AUTHORITY_NODE } from '@baton/authority-transfer/internal/plugins.js';
import { AUDIT_STORE, type AuditStore } from '@baton/contracts/internal/audit-store.js';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import type { Host } from '@baton/kernel/internal/host.js';
import { authorityNodeHostBuilder } from '@baton/host-authority-node/internal/host.js';
import type { EtcdConsensus } from '@baton/plugin-etcd/internal/etcd-consensus.js';
import { decodeEntry } from '@baton/plugin-etcd/internal/log-entry.js';
import { LogKeys } from '@baton/plugin-etcd/internal/log-keys.js';
import { FAST } from '../../plugins/etcd/etcd-fixture.js';
import { eventually } from '../eventually.js';
import { loopbackMembers } from './loopback-members.js';

export type EtcdOwnershipConsensus = OwnershipConsensus &
  Pick<EtcdConsensus<unknown, unknown, unknown>, 'appliedSeq'>;

export interface EtcdAuthorityMember {
  id: string;
  dc: string;
  host: Host;
  node: AuthorityNode;
  consensus: EtcdOwnershipConsensus;
  audit: AuditStore;
}

export interface EtcdAuthorityOptions {
  /** Datacenters with a running HA member each (`<dc>-1`), all voters of one log in etcd. */
  dcs: string[];
  /** Datacenters listed in the roster whose member never runs (an unreachable target). */
  absent?: string[];
  /** A scripted frontier probe for the first member, instead of the HTTP probe. */
  probe?: FrontierProbe;
  /** Member tracker timings (a failover needs the source Dead). */
  tracker?: { suspectAfterMs: number; deadAfterMs: number };
}

/**
 * The etcd plugin tests' timeouts that let a fault end in seconds (lease 2 s, one request up to
 * 3 s), with a proposal given up after 10 s.
 */
const ETCD_TIMEOUTS = { ...FAST, proposeTimeoutMs: 10_000 };

/**
 * Authority nodes in mode ha, one per datacenter, whose ownership consensus is one log in etcd:
 * composed from config as a deployment would (endpoints, prefix and voters; the member id
 * defaults to the node id), on fixed public ports the roster names, pulling each other's feeds
 * every 20 ms and probing each other's frontiers over HTTP.
 */
export class EtcdAuthorityNodes {
  readonly members: EtcdAuthorityMember[] = [];
  readonly prefix = `authority-${randomBytes(6).toString('hex')}/`;

  private constructor(private readonly endpoints: string[]) {}

  static async start(
    endpoints: string[],
    options: EtcdAuthorityOptions,
  ): Promise<EtcdAuthorityNodes> {
    const group = new EtcdAuthorityNodes(endpoints);
    const cluster = await loopbackMembers(options.dcs);
    const { ids } = cluster;
    const roster = cluster.roster();
    for (const dc of options.absent ?? [])
      roster[dc] = { members: { [`${dc}-1`]: { public: 'http://127.0.0.1:9' } } };
    try {
      for (const [i, dc] of options.dcs.entries()) {
        const builder = authorityNodeHostBuilder({
          node: {
            ...cluster.node(i, roster),
            transfers: { reprobeInitialDelayMs: 5, reprobeMaxDelayMs: 50 },
            resolution: { initialDelayMs: 50, maxDelayMs: 500 },
            ...(options.tracker ? { tracker: options.tracker } : {}),
          },
          consensus: {
            use: 'etcd-consensus',
            options: { endpoints, prefix: group.prefix, initialVoters: ids, ...ETCD_TIMEOUTS },
          },
          auditStore: { use: 'memory-audit-store' },
          peerAuth: testPeerAuthForRoster(ids[i], roster),
          dataDir: null,
          log: { level: process.env.ETCD_TEST_LOG ?? 'silent' },
        });
        if (i === 0 && options.probe) builder.value(FRONTIER_PROBE, options.probe);
        const host = builder.build();
        await host.start();
        group.members.push({
          id: ids[i],
          dc,
          host,
          node: host.get(AUTHORITY_NODE),
          consensus: host.get(METADATA_CONSENSUS) as EtcdOwnershipConsensus,
          audit: host.get(AUDIT_STORE),
        });
      }
      await eventually(
        () => group.members.some((m) => m.consensus.leadership().isLeader),
        'an etcd election leader among the members',
      );
    } catch (error) {
      await group.stop();
      throw error;
    }
    return group;
  }

  member(dc: string): EtcdAuthorityMember {
    const member = this.members.find((m) => m.dc === dc);
    if (!member) throw new Error(`no running member in ${dc}`);
    return member;
  }

  /** The log entry in etcd that committed `predicate`'s command: its revision and leadership term. */
  async committedEntry(
    predicate: (command: Record<string, unknown>) => boolean,
  ): Promise<{ revision: number; term: number } | undefined> {
    return (await this.committedEntries(predicate))[0];
  }

  /** Every log entry in etcd whose command matches (a command committed twice shows twice). */
  async committedEntries(
    predicate: (command: Record<string, unknown>) => boolean,
  ): Promise<{ revision: number; term: number }[]> {
    const client = new Etcd3({ hosts: this.endpoints });
    try {
      const keys = new LogKeys(this.prefix);
      const entries = await client.getAll().prefix(keys.logPrefix).exec();
      const found: { revision: number; term: number }[] = [];
      for (const kv of entries.kvs) {
        const entry = decodeEntry(kv.value);
        if (entry.kind === 'command' && predicate(entry.command as Record<string, unknown>)) {
          found.push({ revision: Number(kv.mod_revision), term: entry.term });
        }
      }
      return found;
    } finally {
      client.close();
    }
  }

  async stop(): Promise<void> {
    for (const member of this.members.splice(0).reverse()) await member.host.stop();
  }
}

/**
 * Records every epoch each member applies, per authority, so a test can check that no member
 * ever saw an authority's epoch go backwards. Returns the problems seen (empty when none).
 */
export function watchEpochs(members: EtcdAuthorityMember[]): { problems: string[]; stop(): void } {
  const problems: string[] = [];
  const offs = members.map((member) => {
    const seen = new Map<string, number>();
    return member.consensus.watch((view) => {
      for (const [authority, ownership] of view.state.authorities) {
        const before = seen.get(authority) ?? 0;
        if (ownership.epoch < before)
          problems.push(
            `${member.id}: ${authority} went from epoch ${before} to ${ownership.epoch}`,
          );
        seen.set(authority, ownership.epoch);
      }
    });
  });
  return { problems, stop: () => offs.forEach((off) => off()) };
}
