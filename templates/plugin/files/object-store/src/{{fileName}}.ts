import type {
  ListOptions,
  ListPage,
  ObjectInfo,
  ObjectStore,
  PutOptions,
} from '@baton/contracts';
import type { {{className}}Options } from './options.js';

/**
 * {{className}}: an ObjectStore (baton/framework/contracts/object-store.ts).
 *
 * Every method below throws until you implement it; the conformance suite in
 * test/{{fileName}}.test.ts states the contract one rule per test. Raise the contract's typed
 * errors: StoreUnavailableError when the backend cannot be reached (transient, the caller may
 * retry), PreconditionFailedError when `ifAbsent` finds the key, InvalidKeyError for a key the
 * backend cannot hold safely.
 */
export class {{className}} implements ObjectStore {
  /** Set conditionalPut to true only if `put(..., {ifAbsent: true})` is atomic on your backend. */
  readonly supports = { conditionalPut: true };

  constructor(readonly options: {{className}}Options) {}

  async put(key: string, bytes: Uint8Array, options?: PutOptions): Promise<void> {
    throw notImplemented('put', { key, size: bytes.byteLength, ifAbsent: options?.ifAbsent });
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    throw notImplemented('get', { key });
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    throw notImplemented('head', { key });
  }

  async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    throw notImplemented('list', { prefix, ...options });
  }

  async delete(key: string): Promise<void> {
    throw notImplemented('delete', { key });
  }
}

function notImplemented(method: string, args: Record<string, unknown>): Error {
  return new Error(
    `{{className}}.${method}(${JSON.stringify(args)}) is not implemented yet: implement it in src/{{fileName}}.ts`,
  );
}
