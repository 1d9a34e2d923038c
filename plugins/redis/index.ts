// The Redis plugin: an AuditStore on ioredis.
export { redisAuditStorePlugin } from './plugin.js';
export { RedisAuditStore } from './redis-audit-store.js';
export {
  redisAuditStoreOptions,
  type RedisAuditStoreOptions,
  type RedisAuditStoreInput,
} from './options.js';
