import { AUDIT_STORE, LOGGER } from '@baton/contracts';
import { definePlugin } from '@baton/kernel';
import { redisAuditStoreOptions } from './options.js';
import { RedisAuditStore } from './redis-audit-store.js';

/** The audit store on Redis (standalone, TLS, ACL users, or behind Sentinel). */
export const redisAuditStorePlugin = definePlugin({
  id: 'redis-audit-store',
  description: 'Durable audit records in Redis, written atomically and idempotently.',
  provides: [AUDIT_STORE],
  requires: [LOGGER],
  options: redisAuditStoreOptions,
  register: (ctx) =>
    ctx.provide(AUDIT_STORE, {
      useFactory: (resolve) => new RedisAuditStore(ctx.options, resolve(LOGGER)),
    }),
});
