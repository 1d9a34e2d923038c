import type { Client } from 'minio';
import type { Readable } from 'node:stream';
import { type Clock, BatonError, StoreUnavailableError, type Rng } from '@baton/contracts';
import { withRetries, type RetrySettings } from './retry-policy.js';
import { classifyS3Error, describeS3Error } from './s3-errors.js';

/**
 * One bucket, reached through the minio client with the store's retry policy: every exchange
 * runs through `attempt`, which retries transient failures with back-off on the injected Clock
 * and Rng and turns what still fails into StoreUnavailableError naming the store and the step.
 */
export class S3Bucket {
  constructor(
    readonly client: Client,
    readonly name: string,
    /** How errors name the store, e.g. "S3 bucket segments at minio:9000". */
    readonly storeName: string,
    private readonly retry: RetrySettings,
    private readonly clock: Clock,
    private readonly rng: Rng,
  ) {}

  /** Runs one exchange (`what` says what it was doing, for the error message) with retries. */
  async attempt<T>(what: string, exchange: () => Promise<T>): Promise<T> {
    let tries = 0;
    try {
      return await withRetries(
        this.retry,
        this.clock,
        this.rng,
        (error) => (classifyS3Error(error) === 'transient' ? 'transient' : 'final'),
        () => {
          tries++;
          return exchange();
        },
      );
    } catch (error) {
      // The store's own decisions (a precondition, an unsupported request) pass through.
      if (error instanceof BatonError) throw error;
      const after =
        classifyS3Error(error) === 'transient'
          ? ` after ${tries} ${tries === 1 ? 'try' : 'tries'}`
          : '';
      throw new StoreUnavailableError(
        this.storeName,
        `${what} failed${after}: ${describeS3Error(error)}`,
        {
          cause: error,
        },
      );
    }
  }

  /** The object's bytes, streamed and joined; undefined when there is no such object. No retry. */
  async read(objectName: string): Promise<Uint8Array | undefined> {
    let stream: Readable;
    try {
      stream = await this.client.getObject(this.name, objectName);
    } catch (error) {
      if (classifyS3Error(error) === 'missing') return undefined;
      throw error;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    const whole = Buffer.concat(chunks);
    return new Uint8Array(whole.buffer, whole.byteOffset, whole.byteLength);
  }
}
