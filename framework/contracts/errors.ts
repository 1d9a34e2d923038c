/**
 * The root of every error Baton raises on purpose. `code` is stable and machine-readable (the
 * HTTP layer maps codes to statuses); `message` says what was wrong and what to do about it.
 */
export class BatonError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * A store (object store, audit store, metadata store) could not be read or written right now.
 * Transient by nature: the caller may retry. The API answers 503 and never guesses.
 */
export class StoreUnavailableError extends BatonError {
  constructor(
    readonly store: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('store_unavailable', `${store} is unavailable: ${message}`, options);
  }
}

/** The durable files a corruption can be found in (the `store` label of its metric). */
export type DurableStore = 'stream-wal' | 'raft-log' | 'raft-snapshot' | 'change-feed';

const DURABLE_STORE_NAMES: Record<DurableStore, string> = {
  'stream-wal': 'stream WAL',
  'raft-log': 'Raft log segment',
  'raft-snapshot': 'Raft snapshot',
  'change-feed': 'change feed segment',
};

/**
 * A durable file holds a record that was damaged after it was written (a checksum that does
 * not match, a line that does not parse, a record that does not follow the ones before it), and
 * it is not a torn tail a crash can leave: the records after it were acknowledged too, so
 * nothing is cut silently and the store refuses to open. `offset` is the byte where the
 * damaged record starts; `repair` is the command that moves the file aside and keeps what is
 * intact. Permanent until repaired: retrying does not help.
 */
export class CorruptRecordError extends BatonError {
  readonly store: DurableStore;
  readonly file: string;
  readonly offset: number | undefined;
  readonly reason: string;

  constructor(
    details: { store: DurableStore; file: string; offset?: number; reason: string; repair: string },
    options?: { cause?: unknown },
  ) {
    const at = details.offset === undefined ? '' : ` at byte ${details.offset}`;
    super('storage_corrupt', `${DURABLE_STORE_NAMES[details.store]} ${details.file} is damaged${at}: ${details.reason}. ${details.repair}`, options);
    this.store = details.store;
    this.file = details.file;
    this.offset = details.offset;
    this.reason = details.reason;
  }
}
