import { Client } from 'minio';
import type { Readable } from 'node:stream';
import type { Clock } from '../../framework/contracts/clock.js';
import { StoreUnavailableError } from '../../framework/contracts/errors.js';
import type { Logger } from '../../framework/contracts/logger.js';
import {
  InvalidKeyError,
  PreconditionFailedError,
  UnsupportedOperationError,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
} from '../../framework/contracts/object-store.js';
import type { Rng } from '../../framework/contracts/rng.js';
import type { Lifecycle } from '../../framework/kernel/plugin.js';
import { decodeKey, encodeKey, MAX_ENCODED_KEY_BYTES } from './object-key-codec.js';
import type { S3ObjectStoreOptions } from './options.js';
import { withRetries } from './retry-policy.js';
import { classifyS3Error, describeS3Error } from './s3-errors.js';
import { createS3Transport, type S3Transport } from './s3-transport.js';

const DEFAULT_LIST_LIMIT = 1000;
/** S3 answers at most this many keys per listing request. */
const S3_PAGE_LIMIT = 1000;
/** Names under this prefix are the store's own (encoded keys never start with a dot). */
const PROBE_PREFIX = '.baton-probe/';
/** A single PUT may carry up to 5 GiB; create-only puts never use multipart (see put). */
const SINGLE_PUT_LIMIT = 5 * 1024 * 1024 * 1024;

/**
 * An ObjectStore on any S3 API, through the minio client. Keys are escaped into S3 names (see
 * object-key-codec.ts) so every key the contract allows is stored and listed in the contract's
 * order on every S3 server. Failures of the network or of the server are retried with back-off
 * through the injected Clock and Rng, then raise StoreUnavailableError.
 */
export class S3ObjectStore implements ObjectStore, Lifecycle {
  readonly supports = { conditionalPut: false };
  private readonly http: S3Transport;
  private readonly client: Client;
  private readonly log: Logger;
  private readonly storeName: string;

  constructor(
    private readonly options: S3ObjectStoreOptions,
    private readonly clock: Clock,
    private readonly rng: Rng,
    logger: Logger,
  ) {
    const endpoint = new URL(options.endpoint);
    this.storeName = `S3 bucket ${options.bucket} at ${endpoint.host}`;
    this.log = logger.child({ plugin: 's3-object-store', bucket: options.bucket });
    this.http = createS3Transport(endpoint, options.socketTimeoutMs, options.tls);
    const secure = endpoint.protocol === 'https:';
    const clientOptions = {
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
      // Retries happen here, through the injected Clock and Rng, not in the client.
      retryOptions: { disableRetry: true },
    };
    // The client itself never splits a body: large bodies go up in parts through putInParts,
    // where each part is retried on its own and no earlier upload of the key is resumed.
    this.client = new Client({ ...clientOptions, partSize: SINGLE_PUT_LIMIT });
    if (options.conditionalPut !== 'auto') this.supports.conditionalPut = options.conditionalPut;
  }

  /** Checks the bucket (creating it if asked) and, with conditionalPut 'auto', probes the server. */
  async start(): Promise<void> {
    const exists = await this.attempt('checking the bucket', () =>
      this.client.bucketExists(this.options.bucket),
    );
    if (!exists) {
      if (!this.options.createBucket) {
        throw new StoreUnavailableError(
          this.storeName,
          `the bucket does not exist: create it, or set createBucket: true`,
        );
      }
      await this.attempt('creating the bucket', async () => {
        try {
          await this.client.makeBucket(this.options.bucket, this.options.region);
        } catch (error) {
          // Another member created it in the meantime: that is what we wanted.
          const code = (error as { code?: string }).code;
          if (code !== 'BucketAlreadyOwnedByYou' && code !== 'BucketAlreadyExists') throw error;
        }
      });
      this.log.info('created the bucket');
    }
    if (this.options.conditionalPut === 'auto') {
      this.supports.conditionalPut = await this.probeConditionalPut();
      this.log.info({ conditionalPut: this.supports.conditionalPut }, 'probed create-only puts');
    }
  }

  stop(): void {
    this.http.close();
  }

  async put(key: string, bytes: Uint8Array, options: PutOptions = {}): Promise<void> {
    const name = this.objectName(key);
    const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (!options.ifAbsent) {
      if (body.byteLength > this.options.partSize) return this.putInParts(key, name, body);
      await this.attempt(`storing ${JSON.stringify(key)}`, () =>
        this.client.putObject(this.options.bucket, name, body, body.byteLength),
      );
      return;
    }
    if (!this.supports.conditionalPut)
      throw new UnsupportedOperationError('put with ifAbsent', this.storeName);
    // Create-only puts are single PUTs: S3 checks If-None-Match there (on multipart uploads only
    // at completion, which not every server implements).
    if (body.byteLength > SINGLE_PUT_LIMIT) {
      throw new UnsupportedOperationError('put with ifAbsent of a body over 5 GiB', this.storeName);
    }
    let triedBefore = false;
    await this.attempt(`creating ${JSON.stringify(key)}`, async () => {
      const retry = triedBefore;
      triedBefore = true;
      try {
        await this.client.putObject(this.options.bucket, name, body, body.byteLength, {
          'If-None-Match': '*',
        });
      } catch (error) {
        if (classifyS3Error(error) !== 'precondition') throw error;
        // A retry finding the key may be finding our own earlier try, which reached the server
        // but whose answer was lost. Identical bytes mean the create happened: report success
        // rather than a conflict the caller would misread.
        if (retry && (await this.sameBytes(name, body))) return;
        throw new PreconditionFailedError(key);
      }
    });
  }

  /**
   * A multipart upload: the object appears only when the upload completes, so a failure leaves
   * the previous object (or none) in place; the abandoned parts are aborted, best effort.
   */
  private async putInParts(key: string, name: string, body: Buffer): Promise<void> {
    const { bucket, partSize } = this.options;
    const what = JSON.stringify(key);
    const uploadId = await this.attempt(`starting the upload of ${what}`, () =>
      this.client.initiateNewMultipartUpload(bucket, name, {}),
    );
    try {
      const parts: { part: number; etag: string }[] = [];
      for (let part = 1, offset = 0; offset < body.byteLength; part++, offset += partSize) {
        const chunk = body.subarray(offset, offset + partSize);
        const { etag } = await this.attempt(`uploading part ${part} of ${what}`, () =>
          this.client.uploadPart(
            {
              bucketName: bucket,
              objectName: name,
              uploadID: uploadId,
              partNumber: part,
              headers: {},
            },
            chunk,
          ),
        );
        parts.push({ part, etag });
      }
      await this.attempt(`completing the upload of ${what}`, () =>
        this.client.completeMultipartUpload(bucket, name, uploadId, parts),
      );
    } catch (error) {
      await this.client
        .abortMultipartUpload(bucket, name, uploadId)
        .catch((abortError: unknown) =>
          this.log.warn(
            { err: (abortError as Error).message, name, uploadId },
            'could not abort an upload',
          ),
        );
      throw error;
    }
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    const name = this.objectName(key);
    return this.attempt(`reading ${JSON.stringify(key)}`, () => this.read(name));
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const name = this.objectName(key);
    return this.attempt(`inspecting ${JSON.stringify(key)}`, async () => {
      try {
        const stat = await this.client.statObject(this.options.bucket, name);
        return { key, size: stat.size };
      } catch (error) {
        if (classifyS3Error(error) === 'missing') return undefined;
        throw error;
      }
    });
  }

  async delete(key: string): Promise<void> {
    const name = this.objectName(key);
    await this.attempt(`deleting ${JSON.stringify(key)}`, async () => {
      try {
        await this.client.removeObject(this.options.bucket, name);
      } catch (error) {
        if (classifyS3Error(error) !== 'missing') throw error;
      }
    });
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const limit = options.limit ?? DEFAULT_LIST_LIMIT;
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`list limit must be a positive integer, got ${limit}`);
    }
    const namePrefix = this.options.keyPrefix + encodeKey(prefix, false);
    const after =
      options.startAfter === undefined
        ? ''
        : this.options.keyPrefix + encodeKey(options.startAfter);
    return this.options.serverSortsListings
      ? this.listPaged(prefix, namePrefix, after, limit)
      : this.listWhole(prefix, namePrefix, after, limit);
  }

  /**
   * Pages on the server. The codec keeps S3's order equal to the contract's, so S3's start-after
   * is the contract's startAfter. Each request asks for one key more than the page needs: seeing
   * it is how we know that `next` is due.
   */
  private async listPaged(
    prefix: string,
    namePrefix: string,
    after: string,
    limit: number,
  ): Promise<ListPage> {
    const objects: ObjectInfo[] = [];
    let cursor = after;
    for (;;) {
      const want = Math.min(S3_PAGE_LIMIT, limit - objects.length + 1);
      const page = await this.listNames(prefix, namePrefix, cursor, want);
      for (const item of page.items) {
        cursor = item.name;
        if (item.key === undefined) continue;
        if (objects.length === limit) return { objects, next: objects[objects.length - 1].key };
        objects.push({ key: item.key, size: item.size });
      }
      if (!page.truncated || page.items.length === 0) return { objects };
    }
  }

  /** For servers that list out of order: one request for everything, sorted here. */
  private async listWhole(
    prefix: string,
    namePrefix: string,
    after: string,
    limit: number,
  ): Promise<ListPage> {
    const page = await this.listNames(prefix, namePrefix, after, S3_PAGE_LIMIT);
    if (page.truncated) {
      throw new UnsupportedOperationError(
        `listing more than ${S3_PAGE_LIMIT} keys under ${JSON.stringify(prefix)} on a server that lists out of order (serverSortsListings: false)`,
        this.storeName,
      );
    }
    const all = page.items
      .flatMap((item) =>
        item.key === undefined ? [] : [{ name: item.name, key: item.key, size: item.size }],
      )
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const objects = all.slice(0, limit).map(({ key, size }) => ({ key, size }));
    return all.length > limit ? { objects, next: objects[objects.length - 1].key } : { objects };
  }

  /** One listing request; `key` is undefined for names this store did not write. */
  private async listNames(prefix: string, namePrefix: string, after: string, want: number) {
    const page = await this.attempt(`listing ${JSON.stringify(prefix)}`, () =>
      this.client.listObjectsV2Query(this.options.bucket, namePrefix, '', '', want, after),
    );
    const items = page.objects.flatMap((o) => {
      if (o.name === undefined) return [];
      const key = decodeKey(o.name.slice(this.options.keyPrefix.length));
      return [
        {
          name: o.name,
          key: key !== undefined && key.startsWith(prefix) ? key : undefined,
          size: Number(o.size),
        },
      ];
    });
    return { items, truncated: page.isTruncated };
  }

  /** Reads an object into bytes; undefined when there is no such object. */
  private async read(name: string): Promise<Uint8Array | undefined> {
    let stream: Readable;
    try {
      stream = await this.client.getObject(this.options.bucket, name);
    } catch (error) {
      if (classifyS3Error(error) === 'missing') return undefined;
      throw error;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    const whole = Buffer.concat(chunks);
    return new Uint8Array(whole.buffer, whole.byteOffset, whole.byteLength);
  }

  private async sameBytes(name: string, body: Buffer): Promise<boolean> {
    const stored = await this.read(name);
    return stored !== undefined && Buffer.from(stored).equals(body);
  }

  /**
   * Puts a probe object twice, the second time create-only: a server that honours
   * If-None-Match refuses the second put; one that ignores it (s3rver) accepts it.
   */
  private async probeConditionalPut(): Promise<boolean> {
    const name = `${this.options.keyPrefix}${PROBE_PREFIX}${this.rng.hex(8)}`;
    const body = Buffer.from('probe');
    await this.attempt('probing create-only puts', () =>
      this.client.putObject(this.options.bucket, name, body),
    );
    try {
      return await this.attempt('probing create-only puts', async () => {
        try {
          await this.client.putObject(this.options.bucket, name, body, body.byteLength, {
            'If-None-Match': '*',
          });
          return false;
        } catch (error) {
          if (classifyS3Error(error) === 'precondition') return true;
          if ((error as { code?: string }).code === 'NotImplemented') return false;
          throw error;
        }
      });
    } finally {
      await this.attempt('removing the probe', () =>
        this.client.removeObject(this.options.bucket, name),
      ).catch((error: unknown) =>
        this.log.warn({ err: (error as Error).message, name }, 'could not remove the probe'),
      );
    }
  }

  private objectName(key: string): string {
    if (typeof key !== 'string' || key.length === 0)
      throw new InvalidKeyError(String(key), 'a key must be a non-empty string');
    const name = this.options.keyPrefix + encodeKey(key);
    if (Buffer.byteLength(name) > MAX_ENCODED_KEY_BYTES) {
      throw new InvalidKeyError(
        key,
        `escaped for S3 it is ${Buffer.byteLength(name)} bytes long, over the ${MAX_ENCODED_KEY_BYTES}-byte limit of S3 names: use a shorter key`,
      );
    }
    return name;
  }

  /** Runs one S3 exchange with retries; what still fails becomes StoreUnavailableError. */
  private async attempt<T>(what: string, exchange: () => Promise<T>): Promise<T> {
    let tries = 0;
    try {
      return await withRetries(
        this.options.retry,
        this.clock,
        this.rng,
        (error) => (classifyS3Error(error) === 'transient' ? 'transient' : 'final'),
        () => {
          tries++;
          return exchange();
        },
      );
    } catch (error) {
      if (error instanceof PreconditionFailedError || error instanceof UnsupportedOperationError)
        throw error;
      if (error instanceof StoreUnavailableError) throw error;
      const kind = classifyS3Error(error);
      const after = kind === 'transient' ? ` after ${tries} ${tries === 1 ? 'try' : 'tries'}` : '';
      throw new StoreUnavailableError(
        this.storeName,
        `${what} failed${after}: ${describeS3Error(error)}`,
        {
          cause: error,
        },
      );
    }
  }
}
