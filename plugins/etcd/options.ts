import { z } from 'zod';

const positiveMs = z.number().int().positive();

/**
 * Where the log lives in etcd and how patiently to talk to it. Every member of one deployment
 * uses the same `endpoints` cluster and `prefix`, and its own `memberId`.
 */
export const etcdConsensusOptions = z
  .object({
    /** The etcd client URLs (http:// or https://, with the port), several for a cluster. */
    endpoints: z
      .array(z.string().regex(/^https?:\/\/[^/]+$/, 'must be http(s)://host:port with no path'))
      .min(1, 'list at least one etcd endpoint'),
    /**
     * Every key this plugin writes starts with this, so several deployments (or tests) can share
     * one etcd cluster. Must end with "/".
     */
    prefix: z
      .string()
      .min(2)
      .regex(/\/$/, 'must end with "/" so one deployment never matches another by prefix')
      .default('baton/consensus/'),
    /** This member's id: what leadership and membership name it by. */
    memberId: z
      .string()
      .regex(
        /^[A-Za-z0-9._-]{1,128}$/,
        'must be 1-128 letters, digits, dots, dashes or underscores',
      ),
    /**
     * The voters of a new log (ignored once the log exists: the first member to start writes them
     * as the log's first entry). Default: just this member.
     */
    initialVoters: z.array(z.string().min(1)).min(1).optional(),
    /** etcd password authentication. */
    auth: z
      .object({ username: z.string().min(1), password: z.string() })
      .strict()
      .optional(),
    /** TLS to etcd: PEM certificate authorities and, for mutual TLS, a client certificate and key. */
    tls: z
      .object({ ca: z.string().min(1), cert: z.string().optional(), key: z.string().optional() })
      .strict()
      .optional(),
    /** A proposal without a decision after this long fails (NotAppended or OutcomeUnknown). */
    proposeTimeoutMs: positiveMs.default(10_000),
    /** One etcd request gives up after this long (then the proposal retries until its own deadline). */
    requestTimeoutMs: positiveMs.default(2_000),
    /** A linearizable read gives up after this long with ReadUnavailableError. */
    readTimeoutMs: positiveMs.default(5_000),
    /** Back-off between retries when etcd is unreachable: doubles from min to max, with jitter. */
    retryMinMs: positiveMs.default(25),
    retryMaxMs: positiveMs.default(500),
    /**
     * An etcd endpoint that let a request time out (a frozen or cut-off member answers nothing,
     * so each request sent there waits out its deadline) gets no requests for this long while
     * another endpoint serves; then it is tried again.
     */
    timeoutSuspicionMs: positiveMs.max(600_000).default(5_000),
    /** Proposals waiting on this member beyond this many are refused with queue_saturated. */
    maxPendingProposals: z.number().int().positive().default(4_096),
    /** The leader stores a snapshot after this many log entries past the last one. */
    snapshotEveryEntries: z.number().int().positive().default(10_000),
    /**
     * Entries kept below a snapshot when the log is compacted, so a member a little behind catches
     * up from the log instead of loading the whole snapshot.
     */
    retainEntriesAfterSnapshot: z.number().int().min(0).default(1_000),
    /** Snapshots are stored in chunks of this many bytes (etcd refuses requests over 1.5 MiB). */
    snapshotChunkBytes: z
      .number()
      .int()
      .min(1024)
      .max(1024 * 1024)
      .default(512 * 1024),
    /** How many idempotency keys are remembered (the oldest is forgotten first). */
    idempotencyWindow: z.number().int().positive().default(10_000),
    /** A command whose log entry is larger than this is refused before anything is sent. */
    maxEntryBytes: z
      .number()
      .int()
      .min(1024)
      .max(1024 * 1024)
      .default(1024 * 1024),
    /**
     * Proposals waiting on this member go to etcd together, in one transaction of at most this
     * many entries (each entry and its claim are two of etcd's --max-txn-ops, 128 by default).
     */
    maxBatchEntries: z.number().int().min(1).max(60).default(32),
    /** More entries join a transaction only while their size stays under this (etcd refuses requests over 1.5 MiB). */
    maxBatchBytes: z
      .number()
      .int()
      .min(1024)
      .max(1024 * 1024)
      .default(1024 * 1024),
    /** Lease of this member's election key: a dead leader is replaced after about this long. */
    leaseTtlSeconds: z.number().int().min(2).max(600).default(5),
    /** How many log entries one catch-up read fetches. */
    catchUpPageSize: z.number().int().min(1).max(10_000).default(500),
  })
  .strict()
  .superRefine((options, ctx) => {
    if (options.retryMinMs > options.retryMaxMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['retryMinMs'],
        message: `retryMinMs (${options.retryMinMs}) is above retryMaxMs (${options.retryMaxMs})`,
      });
    }
    if (options.requestTimeoutMs > options.proposeTimeoutMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['requestTimeoutMs'],
        message:
          'requestTimeoutMs must not exceed proposeTimeoutMs: one request would outlive its proposal',
      });
    }
    if (options.tls && Boolean(options.tls.cert) !== Boolean(options.tls.key)) {
      ctx.addIssue({
        code: 'custom',
        path: ['tls'],
        message:
          'a client certificate needs its key (and a key its certificate): set both or neither',
      });
    }
  });

export type EtcdConsensusOptions = z.output<typeof etcdConsensusOptions>;
export type EtcdConsensusInput = z.input<typeof etcdConsensusOptions>;
