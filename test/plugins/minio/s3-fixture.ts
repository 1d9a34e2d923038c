import { randomBytes } from 'node:crypto';
import type { Clock } from '@baton/contracts/internal/clock.js';
import type { Rng } from '@baton/contracts/internal/rng.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import {
  S3Server,
  S3_TEST_CREDENTIALS,
  type S3ServerOptions,
} from '@baton/testing/internal/s3-server.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { s3ObjectStoreOptions, type S3ObjectStoreInput } from '@baton/plugin-minio/internal/options.js';
import { S3ObjectStore } from '@baton/plugin-minio/internal/s3-object-store.js';

export interface S3Fixture {
  server: S3Server;
  store: S3ObjectStore;
  cleanup(): Promise<void>;
}

/** Quick retries, so outage tests end fast while still exercising the back-off path. */
export const FAST_RETRY = { attempts: 3, baseDelayMs: 5, maxDelayMs: 20 };

/** A store options object pointing at `server`, in a fresh bucket unless told otherwise. */
export function storeOptions(server: S3Server, overrides: Partial<S3ObjectStoreInput> = {}) {
  return s3ObjectStoreOptions.parse({
    endpoint: server.endpoint,
    ...S3_TEST_CREDENTIALS,
    bucket: `baton-${randomBytes(6).toString('hex')}`,
    createBucket: true,
    retry: FAST_RETRY,
    // s3rver lists in directory order, not key order.
    serverSortsListings: false,
    ...overrides,
  });
}

/** Its own s3rver (so a test may stop it) and a started store in a fresh bucket. */
export async function openS3Fixture(
  overrides: Partial<S3ObjectStoreInput> = {},
  deps: { clock?: Clock; rng?: Rng; server?: S3ServerOptions } = {},
): Promise<S3Fixture> {
  const server = await S3Server.start(deps.server);
  const store = new S3ObjectStore(
    storeOptions(server, overrides),
    deps.clock ?? new SystemClock(),
    deps.rng ?? new SeededRng(randomBytes(4).readUInt32LE()),
    createSilentLogger(),
  );
  try {
    await store.start();
  } catch (error) {
    await server.close();
    throw error;
  }
  return {
    server,
    store,
    cleanup: async () => {
      store.stop();
      await server.close();
    },
  };
}
