import { testPeerAuthForRoster } from '../../support/peer-auth.js';
import { AUDIT_STORE } from '@baton/contracts/internal/audit-store.js';
import { CLOCK, type Clock } from '@baton/contracts/internal/clock.js';
import { METADATA_CONSENSUS } from '@baton/contracts/internal/metadata-consensus.js';
import { FRONTIER_PROBE } from '@baton/authority-transfer/internal/frontier-probe.js';
import { AUTHORITY_NODE } from '@baton/authority-transfer/internal/plugins.js';
import type { OwnershipConsensus } from '@baton/authority-transfer/internal/audit-projection.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { authorityNodeHostBuilder } from '@baton/host-authority-node/internal/host.js';
import type { MemoryAuditStore } from '@baton/plugin-memory/internal/memory-audit-store.js';
import { ScriptedFrontierProbe } from '../../framework/authority-transfer/scripted-frontier-probe.js';
import { contractFetch } from '../../support/api-contract.js';

export const ADMIN = 'admin-token-olivia';
export const READER = 'reader-token-rita';
export const PEER = 'peer-token';
export const WRITER = 'writer-token';

export const tokens = [
  { token: ADMIN, principal: 'olivia', scopes: ['admin:write', 'admin:read'] },
  { token: READER, principal: 'rita', scopes: ['admin:read'] },
  { token: PEER, principal: 'peers', scopes: ['peer'] },
  { token: WRITER, principal: 'app', scopes: ['authority:write'] },
];

export interface NodeOverrides {
  mode?: 'ha' | 'dc';
  transfers?: Record<string, number>;
  tracker?: Record<string, number>;
  roster?: Record<string, unknown>;
  self?: string;
  /** Use the real HTTP probe instead of the scripted one. */
  httpProbe?: boolean;
  /** A fixed public port (the roster must name it before the node starts). */
  publicPort?: number;
  /** How often the node pulls its peers' feeds. */
  feedPullMs?: number;
  /** Replaces the node's clock (a VirtualClock makes the member tracker deterministic). */
  clock?: Clock;
  /** Where the node keeps its state; null (the default here) keeps it in memory. */
  dataDir?: string | null;
  /** Extra node options (merged over the harness's). */
  node?: Record<string, unknown>;
  /** The host's default audit store (under the data dir) instead of the memory one. */
  defaultAuditStore?: boolean;
  /** Peers unauthenticated (insecure: true) instead of the test credentials of every roster member. */
  insecure?: boolean;
  /** An audit store choice (`{use, options}`) other than the memory one. */
  auditStore?: { use: string; options?: Record<string, unknown> };
  /** A consensus choice other than the default one-voter Raft. */
  consensus?: { use: string; options?: Record<string, unknown> };
}

/**
 * Starts a real authority node on loopback port 0: its default one-voter Raft (in memory unless
 * a dataDir is given), memory audit store, opaque identities, and a scripted frontier probe on
 * the real clock. Resolves once the consensus has a leader, so a test can propose at once.
 */
export async function startNode(overrides: NodeOverrides = {}) {
  const self = overrides.self ?? 'east-1';
  const clock = new SystemClock();
  const probe = new ScriptedFrontierProbe(clock);
  const roster = (overrides.roster ?? {
    east: { members: { 'east-1': { public: 'http://127.0.0.1:9' } } },
    west: { members: { 'west-1': { public: 'http://127.0.0.1:9' } } },
  }) as Record<string, { members: Record<string, unknown> }>;
  const config = {
    ...(overrides.insecure ? { insecure: true } : { peerAuth: testPeerAuthForRoster(self, roster) }),
    node: {
      self,
      mode: overrides.mode ?? 'ha',
      roster,
      public: { port: overrides.publicPort ?? 0 },
      control: { port: 0 },
      tokens,
      peerToken: PEER,
      transfers: { reprobeInitialDelayMs: 5, reprobeMaxDelayMs: 20, ...overrides.transfers },
      ...(overrides.tracker ? { tracker: overrides.tracker } : {}),
      ...(overrides.feedPullMs ? { feed: { pullIntervalMs: overrides.feedPullMs } } : {}),
      ...overrides.node,
    },
    dataDir: overrides.dataDir ?? null,
    ...(overrides.consensus ? { consensus: overrides.consensus } : {}),
    ...(overrides.defaultAuditStore ? {} : { auditStore: overrides.auditStore ?? { use: 'memory-audit-store' } }),
    log: { level: 'silent' },
  };
  const builder = authorityNodeHostBuilder(config);
  if (!overrides.httpProbe) builder.value(FRONTIER_PROBE, probe);
  if (overrides.clock) builder.value(CLOCK, overrides.clock);
  const host = builder.build();
  // A start that fails half way (a port taken) stops what it started, so no timer keeps the run alive.
  await host.start().catch(async (error: unknown) => {
    await host.stop().catch(() => undefined);
    throw error;
  });
  const node = host.get(AUTHORITY_NODE);
  const control = node.controlAddress.url;
  const publicUrl = node.publicAddress.url;
  const consensus = overrides.mode === 'dc' ? undefined : (host.get(METADATA_CONSENSUS) as OwnershipConsensus);
  const audit = overrides.mode === 'dc' ? undefined : (host.get(AUDIT_STORE) as MemoryAuditStore);
  // On a virtual clock the election timer only fires when the test moves time: move it here.
  const virtual = overrides.clock instanceof VirtualClock ? overrides.clock : undefined;
  if (consensus) {
    await waitFor(() => {
      virtual?.advance(10);
      return consensus.leadership().isLeader;
    }, `${self} to lead its one-voter consensus`);
  }
  const checked = contractFetch();
  return {
    host,
    node,
    probe,
    /** fetch, with each answer held to the answering listener's OpenAPI document. */
    checked,
    consensus: consensus!,
    audit: audit!,
    control,
    publicUrl,
    async call(
      method: string,
      path: string,
      options: { token?: string; body?: unknown; key?: string; base?: string; headers?: Record<string, string> } = {},
    ) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      if (options.key) headers['idempotency-key'] = options.key;
      if (options.body !== undefined) headers['content-type'] = 'application/json';
      // Every answer is held to the listener's published OpenAPI document: a mismatch throws.
      const response = await checked(`${options.base ?? control}${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
    },
  };
}

/** Waits for a condition with a deadline (never a blind sleep). */
export async function waitFor(condition: () => boolean, what: string, deadlineMs = 5_000): Promise<void> {
  const start = performance.now();
  while (!condition()) {
    if (performance.now() - start > deadlineMs) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

export const transfer = { authority: 'proj', source: 'east', target: 'west', reason: 'drain east' };
