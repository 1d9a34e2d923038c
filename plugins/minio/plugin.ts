import { CLOCK, LOGGER, OBJECT_STORE, RNG } from '@baton/contracts';
import { definePlugin } from '@baton/kernel';
import { s3ObjectStoreOptions } from './options.js';
import { S3ObjectStore } from './s3-object-store.js';

/** The object store on any S3 API (MinIO, AWS S3, s3rver...), through the minio client. */
export const s3ObjectStorePlugin = definePlugin({
  id: 's3-object-store',
  description:
    'Objects in an S3 bucket (MinIO, AWS S3 or any S3 API), with retries and create-only puts where supported.',
  provides: [OBJECT_STORE],
  requires: [CLOCK, RNG, LOGGER],
  options: s3ObjectStoreOptions,
  register: (ctx) =>
    ctx.provide(OBJECT_STORE, {
      useFactory: (resolve) =>
        new S3ObjectStore(ctx.options, resolve(CLOCK), resolve(RNG), resolve(LOGGER)),
    }),
});
