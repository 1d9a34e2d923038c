import { freeLoopbackPort } from '@baton/conformance/internal/servers/server-process.js';
import { testPeerAuth } from '../../support/peer-auth.js';
import { PEER, tokens, waitFor } from './node-harness.js';

type Roster = Record<string, { members: Record<string, { public: string }> }>;

/** One member per datacenter, on loopback ports chosen before any of them starts. */
export interface LoopbackMembers {
  /** `<dc>-1` for each datacenter, in order. */
  ids: string[];
  ports: number[];
  /** Each member's public server, as its peers reach it directly. */
  urls: string[];
  /** Member id to public URL: the Raft HTTP transport's peers. */
  peers: Record<string, string>;
  /** The roster naming each member's public server; `via` may route one through elsewhere. */
  roster(via?: (i: number) => string): Roster;
  /**
   * The node options member `i` starts with: its public port from the roster, an ephemeral
   * control port, the harness tokens, and its peers' feeds pulled every 20 ms.
   */
  node(i: number, roster: Roster): MemberNodeOptions;
  /**
   * Member `i`'s host config for a Raft cluster of all the members over their public servers:
   * its node options, Raft and its HTTP transport, peer credentials, a memory audit store, no
   * data dir, no log output.
   */
  raftHost(i: number, roster: Roster): Record<string, unknown>;
}

export interface MemberNodeOptions {
  self: string;
  roster: Roster;
  public: { port: number };
  control: { port: number };
  tokens: typeof tokens;
  peerToken: string;
  feed: { pullIntervalMs: number };
}

/**
 * Ports are taken before the nodes start because every roster (and every Raft peer list) must
 * name all the members' public servers up front.
 */
export async function loopbackMembers(datacenters: string[]): Promise<LoopbackMembers> {
  const ids = datacenters.map((dc) => `${dc}-1`);
  const ports: number[] = [];
  for (let i = 0; i < ids.length; i++) ports.push(await freeLoopbackPort());
  const urls = ports.map((port) => `http://127.0.0.1:${port}`);
  return {
    ids,
    ports,
    urls,
    peers: Object.fromEntries(ids.map((id, i) => [id, urls[i]])),
    roster: (via = (i) => urls[i]) =>
      Object.fromEntries(
        datacenters.map((dc, i) => [dc, { members: { [ids[i]]: { public: via(i) } } }]),
      ),
    node: (i, roster) => ({
      self: ids[i],
      roster,
      public: { port: ports[i] },
      control: { port: 0 },
      tokens,
      peerToken: PEER,
      feed: { pullIntervalMs: 20 },
    }),
    raftHost(i: number, roster: Roster) {
      const self = this as LoopbackMembers;
      return {
        node: self.node(i, roster),
        consensus: { use: 'raft', options: { member: ids[i], voters: ids } },
        peerTransport: { use: 'raft-http-transport', options: { member: ids[i], peers: self.peers } },
        peerAuth: testPeerAuth(ids[i], ids),
        auditStore: { use: 'memory-audit-store' },
        dataDir: null,
        log: { level: 'silent' },
      };
    },
  };
}

/** Waits until one of the members leads its consensus, so a test can propose at once. */
export function waitForLeader(
  members: { leadership(): { isLeader: boolean } }[],
  what = 'a Raft leader',
  ms = 15_000,
): Promise<void> {
  return waitFor(() => members.some((m) => m.leadership().isLeader), what, ms);
}
