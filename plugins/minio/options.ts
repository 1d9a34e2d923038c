import { z } from 'zod';

/**
 * Where the objects live and how hard to try. `endpoint` is the S3 API URL (http:// or
 * https://, with a port when not the default): MinIO, AWS S3, s3rver or any S3-compatible API.
 */
export const s3ObjectStoreOptions = z
  .object({
    endpoint: z
      .string()
      .url()
      .regex(/^https?:\/\//, 'must be an http:// or https:// URL'),
    region: z.string().min(1).default('us-east-1'),
    accessKey: z.string().min(1),
    secretKey: z.string().min(1),
    /** Temporary credentials (STS) come with a session token. */
    sessionToken: z.string().min(1).optional(),
    bucket: z
      .string()
      .regex(
        /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
        'must be 3-63 lowercase letters, digits, dots and dashes, starting and ending with a letter or digit',
      ),
    /** Create the bucket at start when it does not exist (otherwise a missing bucket fails start). */
    createBucket: z.boolean().default(false),
    /** Address buckets as https://host/bucket (MinIO, s3rver) rather than https://bucket.host. */
    pathStyle: z.boolean().default(true),
    /** Every object name starts with this, so several deployments can share one bucket. */
    keyPrefix: z
      .string()
      .regex(
        /^([a-z0-9][a-z0-9._-]*\/)*$/,
        'must be empty or lowercase path segments each ending with "/"',
      )
      .default(''),
    /** Bodies larger than this are uploaded in parts of this size (S3 allows 5 MiB to 5 GiB). */
    partSize: z
      .number()
      .int()
      .min(5 * 1024 * 1024)
      .max(5 * 1024 * 1024 * 1024)
      .default(64 * 1024 * 1024),
    /**
     * Create-only puts (If-None-Match: *). `auto` probes the server at start: AWS S3 and MinIO
     * honour the condition, s3rver ignores it, and a store must never claim an atomicity it lacks.
     */
    conditionalPut: z.union([z.literal('auto'), z.boolean()]).default('auto'),
    retry: z
      .object({
        /** Tries per operation, the first included. */
        attempts: z.number().int().min(1).max(20).default(4),
        /** The first back-off; each retry doubles it, up to maxDelayMs, with full jitter. */
        baseDelayMs: z.number().int().min(0).default(100),
        maxDelayMs: z.number().int().min(0).default(2_000),
      })
      .strict()
      .default({ attempts: 4, baseDelayMs: 100, maxDelayMs: 2_000 }),
    /**
     * S3 lists keys in order, which is what lets listings be paged on the server. Some
     * S3-compatible servers do not (s3rver lists in directory order): set false, and each listing
     * fetches every key under the prefix at once (at most 1000) and sorts them here.
     */
    serverSortsListings: z.boolean().default(true),
    /** For https endpoints: whom to trust. */
    tls: z
      .object({
        /** PEM certificate authorities to trust instead of the system ones (a private CA). */
        ca: z.string().optional(),
        /** Keep true in production; false accepts any certificate (test servers only). */
        rejectUnauthorized: z.boolean().default(true),
      })
      .strict()
      .default({ rejectUnauthorized: true }),
    /** A request whose connection stays silent this long is abandoned (and retried). */
    socketTimeoutMs: z.number().int().positive().default(30_000),
  })
  .strict();

export type S3ObjectStoreOptions = z.output<typeof s3ObjectStoreOptions>;
export type S3ObjectStoreInput = z.input<typeof s3ObjectStoreOptions>;
