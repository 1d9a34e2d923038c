import { Client } from 'minio';
import {
  type Clock,
  StoreUnavailableError,
  type Logger,
  InvalidKeyError,
  PreconditionFailedError,
  UnsupportedOperationError,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type Rng,
} from '@baton/contracts';
import type { Lifecycle } from '@baton/kernel';
import { probeConditionalPut } from './conditional-put-probe.js';
import { encodeKey, MAX_ENCODED_KEY_BYTES } from './object-key-codec.js';
import type { S3ObjectStoreOptions } from './options.js';
import { S3Bucket } from './s3-bucket.js';
import { classifyS3Error } from './s3-errors.js';
import { listPaged, listWhole } from './s3-listing.js';
import { putInParts } from './s3-multipart.js';
import { createS3Transport, type S3Transport } from './s3-transport.js';

const DEFAULT_LIST_LIMIT = 1000;
/** Names under this prefix are the store's own: encoded keys never start with a dot. */
const PROBE_PREFIX = '.baton-probe/';
/** A single PUT may carry up to 5 GiB. */
const SINGLE_PUT_LIMIT = 5 * 1024 * 1024 * 1024;

/**
 * An ObjectStore on any S3 API, through the minio client. Keys are escaped into S3 names (see
 * object-key-codec.ts) so every key the contract allows is stored and listed in the contract's
 * order on every S3 server. Failures of the network or of the server are retried with back-off
 * through the injected Clock and Rng (see S3Bucket), then raise StoreUnavailableError.
 */
export class S3ObjectStore implements ObjectStore, Lifecycle {
  readonly supports = { conditionalPut: false };
  private readonly http: S3Transport;
  private readonly bucket: S3Bucket;
  private readonly log: Logger;

  constructor(
    private readonly options: S3ObjectStoreOptions,
    clock: Clock,
    private readonly rng: Rng,
    logger: Logger,
  ) {
    const endpoint = new URL(options.endpoint);
    const secure = endpoint.protocol === 'https:';
    this.log = logger.child({ plugin: 's3-object-store', bucket: options.bucket });
    this.http = createS3Transport(endpoint, options.socketTimeoutMs, options.tls);
    const client = new Client({
      endPoint: endpoint.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: endpoint.port ? Number(endpoint.port) : secure ? 443 : 80,
      useSSL: secure,
      region: options.region,
      accessKey: options.accessKey,
      secretKey: options.secretKey,
      sessionToken: options.sessionToken,
      pathStyle: options.pathStyle,
      transport: this.http.transport,
      transportAgent: this.http.agent,
      // Retries happen in S3Bucket, through the injected Clock and Rng, not in the client.
      retryOptions: { disableRetry: true },
      // The client itself never splits a body: large bodies go up through putInParts.
      partSize: SINGLE_PUT_LIMIT,
    });
    const storeName = `S3 bucket ${options.bucket} at ${endpoint.host}`;
    this.bucket = new S3Bucket(client, options.bucket, storeName, options.retry, clock, rng);
    if (options.conditionalPut !== 'auto') this.supports.conditionalPut = options.conditionalPut;
  }

  /** Checks the bucket (creating it if asked) and, with conditionalPut 'auto', probes the server. */
  async start(): Promise<void> {
    const { client, name } = this.bucket;
    const exists = await this.bucket.attempt('checking the bucket', () =>
      client.bucketExists(name),
    );
    if (!exists) {
      if (!this.options.createBucket) {
        throw new StoreUnavailableError(
          this.bucket.storeName,
          'the bucket does not exist: create it, or set createBucket: true',
        );
      }
      await this.bucket.attempt('creating the bucket', async () => {
        try {
          await client.makeBucket(name, this.options.region);
        } catch (error) {
          // Another member created it in the meantime: that is what we wanted.
          const code = (error as { code?: string }).code;
          if (code !== 'BucketAlreadyOwnedByYou' && code !== 'BucketAlreadyExists') throw error;
        }
      });
      this.log.info('created the bucket');
    }
    if (this.options.conditionalPut === 'auto') {
      const probeName = `${this.options.keyPrefix}${PROBE_PREFIX}${this.rng.hex(8)}`;
      this.supports.conditionalPut = await probeConditionalPut(this.bucket, probeName, this.log);
      this.log.info({ conditionalPut: this.supports.conditionalPut }, 'probed create-only puts');
    }
  }

  stop(): void {
    this.http.close();
  }

  async put(key: string, bytes: Uint8Array, options: PutOptions = {}): Promise<void> {
    const name = this.objectName(key);
    const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const what = JSON.stringify(key);
    const { client } = this.bucket;
    if (!options.ifAbsent) {
      if (body.byteLength > this.options.partSize) {
        return putInParts(this.bucket, name, body, this.options.partSize, what, this.log);
      }
      await this.bucket.attempt(`storing ${what}`, () =>
        client.putObject(this.bucket.name, name, body, body.byteLength),
      );
      return;
    }
    if (!this.supports.conditionalPut) {
      throw new UnsupportedOperationError('put with ifAbsent', this.bucket.storeName);
    }
    // Create-only puts are single PUTs: S3 checks If-None-Match there (on multipart uploads only
    // at completion, which not every server implements).
    if (body.byteLength > SINGLE_PUT_LIMIT) {
      throw new UnsupportedOperationError(
        'put with ifAbsent of a body over 5 GiB',
        this.bucket.storeName,
      );
    }
    let tried = false;
    await this.bucket.attempt(`creating ${what}`, async () => {
      const isRetry = tried;
      tried = true;
      try {
        await client.putObject(this.bucket.name, name, body, body.byteLength, {
          'If-None-Match': '*',
        });
      } catch (error) {
        if (classifyS3Error(error) !== 'precondition') throw error;
        // A retry that finds the key may be finding our own earlier try, which reached the
        // server but whose answer was lost. Identical bytes mean the create happened: report
        // success rather than a conflict the caller would misread.
        if (isRetry && (await this.holds(name, body))) return;
        throw new PreconditionFailedError(key);
      }
    });
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    const name = this.objectName(key);
    return this.bucket.attempt(`reading ${JSON.stringify(key)}`, () => this.bucket.read(name));
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const name = this.objectName(key);
    return this.bucket.attempt(`inspecting ${JSON.stringify(key)}`, async () => {
      try {
        const stat = await this.bucket.client.statObject(this.bucket.name, name);
        return { key, size: stat.size };
      } catch (error) {
        if (classifyS3Error(error) === 'missing') return undefined;
        throw error;
      }
    });
  }

  async delete(key: string): Promise<void> {
    const name = this.objectName(key);
    await this.bucket.attempt(`deleting ${JSON.stringify(key)}`, async () => {
      try {
        await this.bucket.client.removeObject(this.bucket.name, name);
      } catch (error) {
        if (classifyS3Error(error) !== 'missing') throw error;
      }
    });
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const limit = options.limit ?? DEFAULT_LIST_LIMIT;
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(
        `list(${JSON.stringify(prefix)}): limit must be a positive integer, got ${limit}`,
      );
    }
    const { keyPrefix } = this.options;
    const request = {
      prefix,
      namePrefix: keyPrefix + encodeKey(prefix, false),
      keyPrefix,
      after: options.startAfter === undefined ? '' : keyPrefix + encodeKey(options.startAfter),
      limit,
    };
    return this.options.serverSortsListings
      ? listPaged(this.bucket, request)
      : listWhole(this.bucket, request);
  }

  private async holds(name: string, body: Buffer): Promise<boolean> {
    const stored = await this.bucket.read(name);
    return stored !== undefined && Buffer.from(stored).equals(body);
  }

  private objectName(key: string): string {
    if (typeof key !== 'string' || key.length === 0) {
      throw new InvalidKeyError(String(key), 'a key must be a non-empty string');
    }
    const name = this.options.keyPrefix + encodeKey(key);
    const bytes = Buffer.byteLength(name);
    if (bytes > MAX_ENCODED_KEY_BYTES) {
      throw new InvalidKeyError(
        key,
        `escaped for S3 it is ${bytes} bytes long, over the ${MAX_ENCODED_KEY_BYTES}-byte limit of S3 names: use a shorter key`,
      );
    }
    return name;
  }
}
