import { BatonError, StoreUnavailableError } from '@baton/contracts';

export const STORE_NAME = 'redis audit store';

/** Redis error replies that mean "not now", each with what an operator should know. */
const TRANSIENT_REPLIES: [RegExp, string][] = [
  [
    /^READONLY/,
    'Redis answered READONLY: this connection reaches a replica (a failover may be in progress)',
  ],
  [/^LOADING/, 'Redis is loading its dataset into memory'],
  [/^MASTERDOWN/, 'the replica lost its master'],
  [/^BUSY/, 'Redis is busy running a script'],
  [/^TRYAGAIN|^CLUSTERDOWN/, 'the cluster is reconfiguring'],
  [/^OOM/, 'Redis reached its memory limit (maxmemory)'],
  [/^NOREPLICAS/, 'not enough replicas acknowledged the write'],
];

const DISCONNECTED = [
  /Connection is closed/,
  /enableOfflineQueue options is false/,
  /Reached the max retries per request limit/,
  /connect ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND/,
];

/**
 * Every failure to reach, read or write Redis becomes StoreUnavailableError (the API answers 503
 * and never guesses); Baton's own typed errors (a conflict, an invalid record) pass through.
 */
export function toStoreError(operation: string, error: unknown): Error {
  if (error instanceof BatonError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const detail = describe(message);
  return new StoreUnavailableError(STORE_NAME, `${operation} failed: ${detail}`, { cause: error });
}

function describe(message: string): string {
  for (const [pattern, meaning] of TRANSIENT_REPLIES) {
    if (pattern.test(message)) return `${meaning} (${message})`;
  }
  if (/Command timed out/.test(message)) return 'Redis did not answer within commandTimeoutMs';
  if (DISCONNECTED.some((pattern) => pattern.test(message))) {
    return `not connected to Redis, reconnecting (${message})`;
  }
  if (/^WRONGTYPE/.test(message)) {
    return `a key under this store's prefix holds another kind of value: another application uses the prefix, choose a different keyPrefix (${message})`;
  }
  if (/^NOPERM|^NOAUTH|^WRONGPASS/.test(message)) {
    return `Redis refused the credentials or the ACL forbids this command: check username, password and the user's ACL (${message})`;
  }
  return message;
}
