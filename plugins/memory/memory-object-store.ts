import {
  InvalidKeyError,
  PreconditionFailedError,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
} from '@baton/contracts';
import { listLimit } from './list-limit.js';
import { SortedKeys } from './sorted-keys.js';

const DEFAULT_LIST_LIMIT = 1000;

/**
 * The reference ObjectStore: everything in process memory, lost on exit. Bytes are copied in
 * and out, so neither the writer nor a reader can change a stored object through a buffer it
 * holds. `failWith` takes it down on purpose, so tests can drive the 503 paths of a host.
 */
export class MemoryObjectStore implements ObjectStore {
  readonly supports = { conditionalPut: true };
  private readonly objects = new Map<string, Uint8Array>();
  private readonly order = new SortedKeys();
  private failure: Error | undefined;

  /** Every operation rejects with `error` until called again with `undefined`. */
  failWith(error: Error | undefined): void {
    this.failure = error;
  }

  async put(key: string, bytes: Uint8Array, options?: PutOptions): Promise<void> {
    this.checkAvailable();
    checkKey(key);
    if (!(bytes instanceof Uint8Array)) {
      throw new TypeError(`put(${JSON.stringify(key)}): bytes must be a Uint8Array, got ${typeof bytes}`);
    }
    // A single synchronous step after the check: two ifAbsent puts cannot both see "absent".
    if (options?.ifAbsent && this.objects.has(key)) throw new PreconditionFailedError(key);
    this.objects.set(key, new Uint8Array(bytes));
    this.order.add(key);
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    this.checkAvailable();
    checkKey(key);
    const stored = this.objects.get(key);
    return stored === undefined ? undefined : new Uint8Array(stored);
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    this.checkAvailable();
    checkKey(key);
    const stored = this.objects.get(key);
    return stored === undefined ? undefined : { key, size: stored.byteLength };
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    this.checkAvailable();
    const limit = listLimit(options.limit, DEFAULT_LIST_LIMIT, 'memory object store list');
    // One key past the page tells whether `next` is needed.
    const found = [...this.order.range(prefix, options.startAfter, limit + 1)];
    const objects = found.slice(0, limit).map((key) => ({ key, size: this.objects.get(key)!.byteLength }));
    return found.length > limit ? { objects, next: objects[objects.length - 1].key } : { objects };
  }

  async delete(key: string): Promise<void> {
    this.checkAvailable();
    checkKey(key);
    this.objects.delete(key);
    this.order.remove(key);
  }

  private checkAvailable(): void {
    if (this.failure) throw this.failure;
  }
}

function checkKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) {
    throw new InvalidKeyError(String(key), 'a key must be a non-empty string');
  }
}
