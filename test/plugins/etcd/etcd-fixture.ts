import { randomBytes } from 'node:crypto';
import type { StateMachine } from '@baton/contracts/internal/metadata-consensus.js';
import { createPinoLogger, createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import type { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import {
  kvStateMachine,
  type KvCommand,
  type KvResult,
  type KvState,
} from '@baton/conformance/internal/kv-state-machine.js';
import { EtcdConsensus } from '@baton/plugin-etcd/internal/etcd-consensus.js';
import { etcdConsensusOptions, type EtcdConsensusInput } from '@baton/plugin-etcd/internal/options.js';

export type KvEtcdConsensus = EtcdConsensus<KvState, KvCommand, KvResult>;

/** A prefix no other test uses, so tests share one etcd without seeing each other. */
export function freshPrefix(label = 'test'): string {
  return `${label}-${randomBytes(6).toString('hex')}/`;
}

/**
 * Timeouts short enough that a test of a fault ends in seconds (a lost leader is replaced after
 * its 2 s lease) yet long enough for a loaded CI machine, where one request can take a second.
 */
export const FAST: Partial<EtcdConsensusInput> = {
  requestTimeoutMs: 3_000,
  proposeTimeoutMs: 15_000,
  readTimeoutMs: 10_000,
  leaseTtlSeconds: 2,
  retryMinMs: 20,
  retryMaxMs: 200,
};

/** A member (not started) on `endpoints` under `prefix`. ETCD_TEST_LOG=debug shows its logs. */
export function makeMember(
  endpoints: string[],
  prefix: string,
  memberId: string,
  overrides: Partial<EtcdConsensusInput> = {},
  machine: StateMachine<KvState, KvCommand, KvResult> = kvStateMachine,
): KvEtcdConsensus {
  const level = process.env.ETCD_TEST_LOG;
  return new EtcdConsensus(
    etcdConsensusOptions.parse({ endpoints, prefix, memberId, ...FAST, ...overrides }),
    {
      machine,
      clock: new SystemClock(),
      rng: new SeededRng(seedFor(memberId)),
      logger: level
        ? createPinoLogger({ level: level as 'debug', pretty: false })
        : createSilentLogger(),
    },
  );
}

/** Started members n1..n<size>, all voters of one fresh log on `cluster`. */
export async function startGroup(
  cluster: EtcdCluster | { endpoints: string[] },
  size: number,
  overrides: Partial<EtcdConsensusInput> = {},
  prefix = freshPrefix(),
): Promise<{ members: KvEtcdConsensus[]; prefix: string; stop: () => Promise<void> }> {
  const ids = Array.from({ length: size }, (_, i) => `n${i + 1}`);
  const members = ids.map((id) =>
    makeMember(cluster.endpoints, prefix, id, { initialVoters: ids, ...overrides }),
  );
  await Promise.all(members.map((member) => member.start()));
  return {
    members,
    prefix,
    stop: async () => {
      await Promise.all(members.map((member) => member.stop()));
    },
  };
}

/**
 * Waits until `condition` holds, re-checking every few milliseconds, or fails after `timeoutMs`
 * naming what it waited for. For conditions reached through a real etcd, never a fixed sleep.
 */
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: still not true after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** How `promise` settled, without throwing. */
export function outcome<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

/** A seed per member and run: jitter differs between members, as it would between hosts. */
function seedFor(memberId: string): number {
  let hash = randomBytes(4).readUInt32BE(0);
  for (const char of memberId) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return hash;
}
