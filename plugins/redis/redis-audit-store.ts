import type { Redis } from 'ioredis';
import {
  AuditConflictError,
  auditListOptions,
  type AuditListOptions,
  type AuditRecord,
  type AuditStore,
  isBeforeCursor,
  newestFirst,
  seqOf,
  StoreUnavailableError,
  type Logger,
} from '@baton/contracts';
import type { Lifecycle } from '@baton/kernel';
import { decodeAuditRecord, encodeAuditRecord } from './audit-record-codec.js';
import { PUT_AUDIT_RECORD_LUA, PutStatus } from './audit-scripts.js';
import type { RedisAuditStoreOptions } from './options.js';
import { createRedisClient, describeTarget } from './redis-client.js';
import { STORE_NAME, toStoreError } from './redis-errors.js';


type PutScript = (
  authorityKey: string,
  byIdKey: string,
  commitIndex: string,
  id: string,
  encoded: string,
  seq: string,
) => Promise<[number, string]>;

/**
 * The audit trail in Redis. Layout under the key prefix P:
 * - `P audit:authority:<authority>`: sorted set of the authority's records, scored by
 *   commit_index, so "latest" and "newest first" are one range read;
 * - `P audit:by-id`: hash from transfer id to record, for lookups by id.
 * Records are immutable, so keeping each one in both places never lets them disagree; the write
 * script puts it in both at once or in neither.
 */
export class RedisAuditStore implements AuditStore, Lifecycle {
  private readonly redis: Redis;
  private readonly putScript: PutScript;
  private readonly log: Logger;
  private lastConnectionError?: Error;
  private reachable = false;

  constructor(
    private readonly options: RedisAuditStoreOptions,
    logger: Logger,
  ) {
    this.log = logger.child({ plugin: 'redis-audit-store', keyPrefix: options.keyPrefix });
    this.redis = createRedisClient(options);
    this.redis.defineCommand('batonPutAuditRecord', { numberOfKeys: 2, lua: PUT_AUDIT_RECORD_LUA });
    const redis = this.redis as unknown as { batonPutAuditRecord: PutScript };
    this.putScript = (...args) => redis.batonPutAuditRecord(...args);
    this.redis.on('error', (error: Error) => {
      this.lastConnectionError = error;
      if (this.reachable) {
        this.reachable = false;
        this.log.warn({ err: error.message }, 'lost the connection to Redis; reconnecting');
      }
    });
    this.redis.on('ready', () => {
      if (!this.reachable) this.log.info({ target: describeTarget(options) }, 'connected to Redis');
      this.reachable = true;
    });
    this.redis.on('close', () => {
      if (this.reachable) this.log.warn('the connection to Redis closed; reconnecting');
      this.reachable = false;
    });
  }

  /** Connects and checks that Redis answers; a host fails to start rather than run blind. */
  async start(): Promise<void> {
    try {
      await this.redis.connect();
      await this.redis.ping();
    } catch (error) {
      this.redis.disconnect();
      const why = this.lastConnectionError?.message ?? (error as Error).message;
      throw new StoreUnavailableError(
        STORE_NAME,
        `cannot reach Redis at ${describeTarget(this.options)} (${why}): check that it runs and that url/host/port, credentials and tls are right`,
        { cause: this.lastConnectionError ?? error },
      );
    }
  }

  async stop(): Promise<void> {
    if (this.redis.status === 'end') return;
    try {
      await this.redis.quit();
    } catch {
      // Not connected: nothing to say goodbye to, just stop reconnecting.
      this.redis.disconnect();
    }
  }

  async put(record: AuditRecord): Promise<{ created: boolean }> {
    const encoded = encodeAuditRecord(record);
    let status: number;
    let existing: string;
    try {
      [status, existing] = await this.putScript(
        this.authorityKey(record.authority),
        this.byIdKey(),
        String(record.commit_index),
        record.id,
        encoded,
        String(seqOf(record)),
      );
    } catch (error) {
      throw toStoreError(`storing audit record ${record.id}`, error);
    }
    switch (status) {
      case PutStatus.Created:
        return { created: true };
      case PutStatus.AlreadyStored:
        return { created: false };
      case PutStatus.PositionTaken:
        throw new AuditConflictError(
          record,
          `commit_index ${record.commit_index} of ${record.authority} already holds transfer ${this.describeStored(existing)}`,
        );
      case PutStatus.IdTaken:
        throw new AuditConflictError(
          record,
          `transfer id ${record.id} is already recorded as ${this.describeStored(existing)}`,
        );
      default:
        throw new StoreUnavailableError(
          STORE_NAME,
          `the write script answered an unknown status ${status}`,
        );
    }
  }

  async byId(id: string): Promise<AuditRecord | undefined> {
    const text = await this.run(`reading audit record ${id}`, () =>
      this.redis.hget(this.byIdKey(), id),
    );
    return text === null ? undefined : this.decode(text, this.byIdKey());
  }

  async latest(authority: string): Promise<AuditRecord | undefined> {
    const [newest] = await this.list(authority, { limit: 1 });
    return newest;
  }

  async list(authority: string, options?: AuditListOptions): Promise<AuditRecord[]> {
    const cursor = auditListOptions(options, `redis audit store (${JSON.stringify(authority)})`);
    const { limit, before, beforeSeq } = cursor;
    const key = this.authorityKey(authority);
    const what = `listing the audit records of ${authority}`;
    // Scores are commit indexes, shared by the records one entry sealed: those of the cursor's
    // own entry below its seq come first, then "(before" excludes the cursor's entry. A page may
    // end inside an entry; its last record's seq is where the next page resumes.
    const sameEntry =
      beforeSeq > 0
        ? (await this.run(what, () => this.redis.zrangebyscore(key, before, before))).map((text) => this.decode(text, key)).filter((r) => isBeforeCursor(r, cursor))
        : [];
    const older = (await this.run(what, () => this.redis.zrevrangebyscore(key, `(${before}`, '-inf', 'LIMIT', 0, limit))).map((text) =>
      this.decode(text, key),
    );
    // Members of one score come in text order, not seq order: when the range read was cut, the
    // whole last entry is read, so the page ends on its highest seqs and the cursor skips none.
    const last = older.at(-1);
    const lastEntry =
      last && older.length === limit
        ? (await this.run(what, () => this.redis.zrangebyscore(key, last.commit_index, last.commit_index))).map((text) => this.decode(text, key))
        : [];
    const unique = new Map<string, AuditRecord>();
    for (const record of [...sameEntry, ...older, ...lastEntry]) unique.set(`${record.commit_index}:${seqOf(record)}`, record);
    return [...unique.values()].sort(newestFirst).slice(0, limit);
  }

  private async run<T>(operation: string, command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      throw toStoreError(operation, error);
    }
  }

  private decode(text: string, key: string): AuditRecord {
    const record = decodeAuditRecord(text);
    if (!record) {
      // Not something this store wrote: answering with a guess would be worse than a 503.
      throw new StoreUnavailableError(
        STORE_NAME,
        `key ${key} holds a value that is not an audit record: another application may use the prefix ${this.options.keyPrefix}`,
      );
    }
    return record;
  }

  private describeStored(text: string): string {
    const stored = decodeAuditRecord(text);
    return stored
      ? `${stored.id} (${stored.authority} @ ${stored.commit_index})`
      : 'an unreadable record';
  }

  private authorityKey(authority: string): string {
    return `${this.options.keyPrefix}audit:authority:${authority}`;
  }

  private byIdKey(): string {
    return `${this.options.keyPrefix}audit:by-id`;
  }
}
