import { Redis, type RedisOptions } from 'ioredis';
import type { RedisAuditStoreOptions } from './options.js';

/** Reconnection back-off: quick at first, then every 2 s, forever (Redis may be down for long). */
function reconnectDelay(attempt: number): number {
  return Math.min(50 * 2 ** Math.min(attempt, 6), 2_000);
}

/**
 * The ioredis client for the audit store. Commands fail fast while disconnected instead of
 * queueing (the caller gets StoreUnavailableError and decides), a command sent before a
 * disconnection is not silently re-sent after the caller was told it failed, and the client keeps
 * reconnecting in the background so work resumes when Redis returns, without a restart.
 */
export function createRedisClient(options: RedisAuditStoreOptions): Redis {
  const common: RedisOptions = withoutUndefined({
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    enableReadyCheck: true,
    connectTimeout: options.connectTimeoutMs,
    commandTimeout: options.commandTimeoutMs,
    retryStrategy: reconnectDelay,
    // After a failover the old master answers READONLY: reconnect to find the new one (through
    // Sentinel when configured), without replaying the refused command.
    reconnectOnError: (error: Error) => /^READONLY/.test(error.message),
    username: options.username,
    password: options.password,
    db: options.db,
    tls: options.tls === true ? {} : options.tls === false ? undefined : options.tls,
  });
  if (options.sentinels) {
    return new Redis(
      withoutUndefined({
        ...common,
        sentinels: options.sentinels,
        name: options.name,
        sentinelUsername: options.sentinelUsername,
        sentinelPassword: options.sentinelPassword,
        sentinelRetryStrategy: reconnectDelay,
      }),
    );
  }
  const address = withoutUndefined({ host: options.host, port: options.port });
  // The url is parsed here rather than by ioredis, which would let it win over explicit fields.
  const fromUrl = options.url ? parseRedisUrl(options.url) : { host: '127.0.0.1', port: 6379 };
  return new Redis({ ...fromUrl, ...common, ...address });
}

/** The connection fields a redis:// or rediss:// url spells: host, port, user, password, db, tls. */
export function parseRedisUrl(text: string): RedisOptions {
  const url = new URL(text);
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : undefined;
  return withoutUndefined({
    host: url.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1',
    port: url.port ? Number(url.port) : 6379,
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db,
    tls: url.protocol === 'rediss:' ? {} : undefined,
  });
}

/** ioredis treats an explicit `undefined` as a value; leave unset options out instead. */
function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Where the client is connecting, for messages (never includes credentials). */
export function describeTarget(options: RedisAuditStoreOptions): string {
  if (options.sentinels) {
    return `master "${options.name}" via sentinels ${options.sentinels.map((s) => `${s.host}:${s.port}`).join(', ')}`;
  }
  if (options.url) {
    const url = new URL(options.url);
    return `${url.protocol}//${options.host ?? url.hostname}:${options.port ?? (url.port || 6379)}`;
  }
  return `${options.host ?? '127.0.0.1'}:${options.port ?? 6379}`;
}
