import { randomBytes } from 'node:crypto';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { RedisServer } from '@baton/conformance/internal/servers/redis-server.js';
import {
  redisAuditStoreOptions,
  type RedisAuditStoreInput,
} from '@baton/plugin-redis/internal/options.js';
import { RedisAuditStore } from '@baton/plugin-redis/internal/redis-audit-store.js';

/** A store on `server` under a fresh random prefix, not yet started. */
export function makeStore(
  server: RedisServer,
  overrides: Partial<RedisAuditStoreInput> = {},
): RedisAuditStore {
  return new RedisAuditStore(
    redisAuditStoreOptions.parse({
      url: server.url,
      keyPrefix: `test-${randomBytes(6).toString('hex')}:`,
      commandTimeoutMs: 1_000,
      connectTimeoutMs: 1_000,
      ...overrides,
    }),
    createSilentLogger(),
  );
}

/** A started store on `server`; stopped by the returned cleanup. */
export async function openStore(
  server: RedisServer,
  overrides: Partial<RedisAuditStoreInput> = {},
): Promise<{ store: RedisAuditStore; cleanup: () => Promise<void> }> {
  const store = makeStore(server, overrides);
  await store.start();
  return { store, cleanup: () => store.stop() };
}

/**
 * Polls `probe` until it resolves (ignoring failures meanwhile) or the deadline passes, in which
 * case the last failure is thrown. For waiting on a reconnection, never for a fixed time.
 */
export async function eventually<T>(probe: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await probe();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/** The time `promise` takes to settle, and how it settled. */
export async function timed<T>(
  promise: Promise<T>,
): Promise<{ ms: number; result: PromiseSettledResult<T> }> {
  const started = Date.now();
  const [result] = await Promise.allSettled([promise]);
  return { ms: Date.now() - started, result };
}
