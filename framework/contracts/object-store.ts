import { BatonError } from './errors.js';
import { token } from './token.js';
export { StoreUnavailableError } from './errors.js';

/** What `head` and `list` know about one object. */
export interface ObjectInfo {
  key: string;
  size: number;
}

export interface ListOptions {
  /** Only keys strictly greater than this one (the `next` of the previous page). */
  startAfter?: string;
  /** At most this many keys (default 1000). */
  limit?: number;
}

export interface ListPage {
  /** In ascending order of key (UTF-16 code unit order, as JavaScript compares strings). */
  objects: ObjectInfo[];
  /** Present when more keys may follow: pass it as `startAfter` for the next page. */
  next?: string;
}

export interface PutOptions {
  /** Create only: fail with PreconditionFailedError if the key already exists. */
  ifAbsent?: boolean;
}

/**
 * Durable bytes by key: where stream records live (segment objects). Keys are non-empty
 * strings that may contain `/` and any Unicode; a store rejects keys it cannot hold safely with
 * InvalidKeyError. A `put` that resolved is durable. A `put` refused with InvalidKeyError,
 * PreconditionFailedError or UnsupportedOperationError stored nothing. A `put` that failed with
 * StoreUnavailableError has an unknown outcome on a networked store (the answer may have been
 * lost after the write): the object is either whole or absent, never torn, and a caller that
 * must know reads it back.
 */
export interface ObjectStore {
  readonly supports: {
    /** `put(..., {ifAbsent: true})` is atomic on this store. Without it, ifAbsent is refused. */
    conditionalPut: boolean;
  };
  put(key: string, bytes: Uint8Array, options?: PutOptions): Promise<void>;
  /** The object's bytes, or undefined when there is no such key. */
  get(key: string): Promise<Uint8Array | undefined>;
  head(key: string): Promise<ObjectInfo | undefined>;
  list(prefix: string, options?: ListOptions): Promise<ListPage>;
  /** Removes the key; removing a missing key succeeds. */
  delete(key: string): Promise<void>;
}

export const OBJECT_STORE = token<ObjectStore>('ObjectStore');

/** `put` with `ifAbsent` found the key already present. Nothing was written. */
export class PreconditionFailedError extends BatonError {
  constructor(readonly key: string) {
    super('precondition_failed', `object ${JSON.stringify(key)} already exists`);
  }
}

/** The key cannot be stored safely (empty, escapes the store's root, contains NUL...). */
export class InvalidKeyError extends BatonError {
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super('invalid_key', `object key ${JSON.stringify(key)} is not allowed: ${reason}`);
  }
}

/** `ifAbsent` was asked of a store that cannot do it atomically (see `supports`). */
export class UnsupportedOperationError extends BatonError {
  constructor(operation: string, store: string) {
    super('unsupported', `${store} does not support ${operation}`);
  }
}
