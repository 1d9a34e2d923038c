// The MinIO/S3 plugin: an ObjectStore on the minio client.
export { s3ObjectStorePlugin } from './plugin.js';
export { S3ObjectStore } from './s3-object-store.js';
export {
  s3ObjectStoreOptions,
  type S3ObjectStoreOptions,
  type S3ObjectStoreInput,
} from './options.js';
// @internal: how object keys are spelt in a bucket, exported for the codec's own tests.
export { encodeKey, decodeKey } from './object-key-codec.js';
