import { z } from 'zod';
import { bearerTokensSchema, admissionLimitsSchema, eventStreamLimitsSchema, listenerTlsSchema } from '@baton/http';

const listener = z
  .object({
    port: z.number().int().min(0).max(65535),
    host: z.string().min(1).default('127.0.0.1'),
    /** Serve HTTPS on this listener with this certificate and key. */
    tls: listenerTlsSchema.optional(),
    /** Connection caps and deadlines (framework/http/connection-admission.ts). */
    admission: admissionLimitsSchema.partial().optional(),
  })
  .strict();

const rosterSchema = z.record(
  z.string().min(1),
  z
    .object({
      members: z.record(z.string().min(1), z.object({ public: z.url('a member public address is an http(s) URL') }).strict()),
    })
    .strict(),
);

/** The options of an authority node: who it is, where it listens, whom it knows, its budgets. */
export const authorityNodeOptions = z
  .object({
    /** This member's id; the roster must list it. In mode ha it is also its consensus member id. */
    self: z.string().min(1),
    /** ha: shared ownership consensus, planned transfers. dc: no consensus; transfers answer 503. */
    mode: z.enum(['ha', 'dc']).default('ha'),
    roster: rosterSchema,
    control: listener.default({ port: 7601, host: '127.0.0.1' }),
    public: listener
      .extend({
        /** Ownership feed watchers (GET /availability/v1/authorities/{authority}/ownership): how many, heartbeat, slow readers. */
        watchers: eventStreamLimitsSchema.partial().optional(),
      })
      .strict()
      .default({ port: 7600, host: '127.0.0.1' }),
    /** Bearer tokens of both listeners, with their principals and scopes. */
    tokens: bearerTokensSchema.default([]),
    /** Token this node presents to its peers' public servers (a token with the "peer" scope). */
    peerToken: z.string().min(1).optional(),
    transfers: z
      .object({
        budgetMs: z.number().int().min(1).default(5 * 60_000),
        probeTimeoutMs: z.number().int().min(1).default(10_000),
        reprobeInitialDelayMs: z.number().int().min(1).default(100),
        reprobeMaxDelayMs: z.number().int().min(1).default(2_000),
        abandonedWindow: z.number().int().min(0).default(256),
        /** How long the source may stay frozen for one attempt before the freeze is lifted and retried. */
        freezeBudgetMs: z.number().int().min(1).default(5_000),
        /** Past a registered transfer's deadline (or thaw time) by this much, any member releases (or thaws) it. */
        expiryGraceMs: z.number().int().min(0).default(10_000),
        /**
         * How far apart members' clocks may be (default: half of expiryGraceMs). Below the grace,
         * or a member could expire a registration before its driver's deadline; checked against
         * every peer on each feed pull, and a member that sees it exceeded drives no new transfer.
         */
        maxClockSkewMs: z.number().int().min(0).optional(),
      })
      .strict()
      .refine((t) => t.maxClockSkewMs === undefined || t.maxClockSkewMs < t.expiryGraceMs, {
        message: 'maxClockSkewMs must be below expiryGraceMs: a member whose clock is ahead of the driver by the grace would expire its registration before its deadline',
        path: ['maxClockSkewMs'],
      })
      .default({ budgetMs: 300_000, probeTimeoutMs: 10_000, reprobeInitialDelayMs: 100, reprobeMaxDelayMs: 2_000, abandonedWindow: 256, freezeBudgetMs: 5_000, expiryGraceMs: 10_000 }),
    tracker: z
      .object({
        suspectAfterMs: z.number().int().min(1).default(5_000),
        deadAfterMs: z.number().int().min(1).default(30_000),
      })
      .strict()
      .default({ suspectAfterMs: 5_000, deadAfterMs: 30_000 }),
    feed: z
      .object({
        /**
         * Directory of this member's change feed and of its replicas of the peers' feeds. Without
         * it both live in memory: acknowledged writes die with the process, and the feed comes
         * back under a new incarnation (so peers never mistake old serials for new ones).
         */
        dir: z.string().min(1).optional(),
        pullIntervalMs: z.number().int().min(1).default(500),
        pullTimeoutMs: z.number().int().min(1).default(2_000),
        batch: z.number().int().min(1).default(1_000),
        /** Entries kept for a peer that stopped pulling before they are trimmed anyway. */
        maxRetained: z.number().int().min(1).default(1_000_000),
        /** Entries of each peer's feed kept on disk behind what was applied. */
        replicaRetain: z.number().int().min(0).default(10_000),
        segmentEntries: z.number().int().min(1).default(10_000),
      })
      .strict()
      .default({ pullIntervalMs: 500, pullTimeoutMs: 2_000, batch: 1_000, maxRetained: 1_000_000, replicaRetain: 10_000, segmentEntries: 10_000 }),
    /** Background resolution of transfers whose commit outcome is unknown. */
    resolution: z
      .object({
        initialDelayMs: z.number().int().min(1).default(500),
        maxDelayMs: z.number().int().min(1).default(30_000),
      })
      .strict()
      .default({ initialDelayMs: 500, maxDelayMs: 30_000 }),
  })
  .strict()
  .superRefine((options, ctx) => {
    const listed = Object.values(options.roster).some((dc) => options.self in dc.members);
    if (!listed) {
      ctx.addIssue({ code: 'custom', path: ['self'], message: `member ${options.self} is not in the roster: list it under its datacenter` });
    }
  });

export type AuthorityNodeOptions = z.output<typeof authorityNodeOptions>;
