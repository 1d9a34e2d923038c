import { z } from 'zod';

const port = z.number().int().min(1).max(65535);

const tlsOptions = z
  .object({
    /** PEM certificate authorities to trust instead of the system ones. */
    ca: z.string().optional(),
    /** PEM client certificate and key, for servers that require mutual TLS. */
    cert: z.string().optional(),
    key: z.string().optional(),
    /** The name to verify the server certificate against (default: the host). */
    servername: z.string().optional(),
    /** Keep true in production; false accepts any certificate (test servers only). */
    rejectUnauthorized: z.boolean().default(true),
  })
  .strict();

/**
 * How to reach Redis and where to keep the audit trail in it. Either a `url`
 * (`redis://user:password@host:port/db`, `rediss://` for TLS), or `host`/`port`, or `sentinels`
 * with the master group `name`; explicit fields override what the url says.
 */
export const redisAuditStoreOptions = z
  .object({
    url: z
      .string()
      .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
      .refine((url) => URL.canParse(url), 'is not a valid URL')
      .refine(
        (url) => !URL.canParse(url) || /^\/?(\d+)?$/.test(new URL(url).pathname),
        'the path must be empty or a database number, e.g. redis://host:6379/2',
      )
      .optional(),
    host: z.string().min(1).optional(),
    port: port.optional(),
    /** ACL user (Redis 6+); omit for the default user. */
    username: z.string().min(1).optional(),
    password: z.string().optional(),
    /** true for TLS with default settings, or the TLS settings themselves. */
    tls: z.union([z.boolean(), tlsOptions]).default(false),
    db: z.number().int().min(0).optional(),
    /**
     * Every key this store writes starts with this, so several deployments can share one Redis.
     * For Redis Cluster, put a hash tag in it (e.g. `{baton-east}:`) so the keys of one
     * deployment live in one slot, which the atomic write script needs.
     */
    keyPrefix: z.string().min(1).default('baton:'),
    /** Give up on a connection attempt after this long. */
    connectTimeoutMs: z.number().int().positive().default(5_000),
    /** A command without an answer after this long fails with StoreUnavailableError. */
    commandTimeoutMs: z.number().int().positive().default(2_000),
    /** Redis Sentinel: the sentinels to ask for the current master of `name`. */
    sentinels: z
      .array(z.object({ host: z.string().min(1), port }).strict())
      .min(1)
      .optional(),
    /** Redis Sentinel: the master group name. */
    name: z.string().min(1).optional(),
    sentinelUsername: z.string().min(1).optional(),
    sentinelPassword: z.string().optional(),
  })
  .strict()
  .superRefine((options, ctx) => {
    if (options.sentinels && !options.name) {
      ctx.addIssue({
        code: 'custom',
        path: ['name'],
        message: 'sentinels are set but the master group name is missing: set "name"',
      });
    }
    if (options.name && !options.sentinels) {
      ctx.addIssue({
        code: 'custom',
        path: ['sentinels'],
        message:
          '"name" is a Sentinel master group but no sentinels are listed: add "sentinels" or remove "name"',
      });
    }
    if (options.sentinels && (options.url || options.host || options.port)) {
      ctx.addIssue({
        code: 'custom',
        path: ['sentinels'],
        message: 'with sentinels the master address comes from Sentinel: remove url, host and port',
      });
    }
  });

export type RedisAuditStoreOptions = z.output<typeof redisAuditStoreOptions>;
export type RedisAuditStoreInput = z.input<typeof redisAuditStoreOptions>;
