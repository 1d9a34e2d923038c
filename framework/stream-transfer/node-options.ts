import { z } from 'zod';
import { bearerTokensSchema, admissionLimitsSchema, eventStreamLimitsSchema, listenerTlsSchema } from '@baton/http';
import { dataPlaneOptions } from './data-access.js';
import { labelKeySchema, labelsSchema } from './labels.js';
import { ID_PATTERN, MAX_NODE_SLOTS } from './model.js';
import { DEFAULT_NODE_LIVENESS_OPTIONS as LIVENESS } from './node-liveness.js';
import { DEFAULT_PHI_ACCRUAL_OPTIONS as PHI } from './phi-accrual.js';
import { DEFAULT_STREAM_NODE_OPTIONS } from './stream-node.js';

/**
 * How Dead is decided (node-liveness.ts): at the fixed `deadAfterMs`, or by phi accrual
 * (phi-accrual.ts) between `minDeadAfterMs` and `deadAfterMs`.
 */
export const livenessDetectorOptions = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('fixed') }).strict(),
  z
    .object({
      kind: z.literal('phi'),
      threshold: z.number().min(1).max(50).default(PHI.threshold).describe('Phi at or above which a silent node is Dead'),
      minDeadAfterMs: z.number().int().min(30).default(900).describe('Never Dead before this much silence; the lease each node holds is this long'),
      acceptablePauseMs: z
        .number()
        .int()
        .min(0)
        .max(600_000)
        .default(PHI.acceptablePauseMs)
        .describe("A silence this much longer than a node's usual gap between renewals is still normal"),
      minStdDevMs: z.number().int().min(1).max(600_000).default(PHI.minStdDevMs).describe('The spread of the gaps between renewals assumed at least'),
      window: z.number().int().min(4).max(10_000).default(PHI.window).describe('How many recent gaps between renewals are kept per node'),
    })
    .strict(),
]);

/** Lease renewals, the Alive / Suspect / Dead thresholds, and automatic failover (node-liveness.ts). */
export const livenessOptions = z
  .object({
    renewEveryMs: z.number().int().min(10).default(LIVENESS.renewEveryMs),
    suspectAfterMs: z.number().int().min(20).default(LIVENESS.suspectAfterMs),
    deadAfterMs: z.number().int().min(30).default(LIVENESS.deadAfterMs),
    /** Dead this long, a node is failed over by the metadata leader; null: only by an operator. */
    autoFailoverAfterMs: z.number().int().min(0).nullable().default(LIVENESS.autoFailoverAfterMs),
    detector: livenessDetectorOptions
      .default({ kind: 'fixed' })
      .describe('How Dead is decided: {"kind":"fixed"} at deadAfterMs, or {"kind":"phi"} by phi accrual from minDeadAfterMs to deadAfterMs'),
  })
  .strict()
  .refine((o) => o.suspectAfterMs > o.renewEveryMs, { message: 'suspectAfterMs must exceed renewEveryMs', path: ['suspectAfterMs'] })
  .refine((o) => o.deadAfterMs > o.suspectAfterMs, { message: 'deadAfterMs must exceed suspectAfterMs', path: ['deadAfterMs'] })
  .refine((o) => o.detector.kind !== 'phi' || (o.detector.minDeadAfterMs > o.suspectAfterMs && o.detector.minDeadAfterMs <= o.deadAfterMs), {
    message: 'detector.minDeadAfterMs must exceed suspectAfterMs and be at most deadAfterMs',
    path: ['detector', 'minDeadAfterMs'],
  });

/** The options of a stream node: who it is, where it listens, its capacity, WAL and budgets. */
export const streamNodeOptions = z
  .object({
    /** This node's id in the metadata (and its consensus member id). */
    self: z.string().regex(ID_PATTERN, 'self must be a node id: letters, digits, ".", "_" or "-"'),
    /** The URL clients are sent to in 409 hints; defaults to the bound listener's URL. */
    address: z.url({ protocol: /^https?$/, error: 'address must be an http(s) URL' }).optional(),
    /** How many streams this node may own. */
    slots: z.number().int().positive().max(MAX_NODE_SLOTS).default(1_000),
    /** What stream placements match against, e.g. {"zone": "z1", "rack": "r3"}; registered with the node. */
    labels: labelsSchema.default({}),
    http: z
      .object({
        port: z.number().int().min(0).max(65535).default(7700),
        host: z.string().min(1).default('127.0.0.1'),
        /** Serve HTTPS (clients, admin and peers alike) with this certificate and key. */
        tls: listenerTlsSchema.optional(),
        /** Connection caps and deadlines (framework/http/connection-admission.ts). */
        admission: admissionLimitsSchema.partial().optional(),
        /** Ownership feed watchers (GET /v1/streams/{stream}/ownership as event streams): how many, heartbeat, slow readers. */
        watchers: eventStreamLimitsSchema.partial().optional(),
      })
      .strict()
      .default({ port: 7700, host: '127.0.0.1' }),
    /**
     * Bearer tokens of the API: admin routes need the "admin" scope, appends "stream:append",
     * reads "stream:read" (or "stream:append:<pattern>" for the streams a pattern matches).
     */
    tokens: bearerTokensSchema.default([]),
    /** Who may use the data API without a token: nobody by default (data-access.ts). */
    dataPlane: dataPlaneOptions.default({ anonymous: 'none' }),
    /** Where the local WAL lives: a directory (durable), or memory (nothing survives a restart). */
    wal: z
      .discriminatedUnion('kind', [
        z.object({ kind: z.literal('file'), dir: z.string().min(1, 'give the WAL directory') }).strict(),
        z.object({ kind: z.literal('memory') }).strict(),
      ])
      .default({ kind: 'file', dir: 'data/wal' }),
    /** Register this node (id, address, slots) in the metadata on start. */
    register: z.boolean().default(true),
    parkTimeoutMs: z.number().int().min(1).default(10_000),
    maxBufferedBytes: z.number().int().min(1024).default(32 * 1024 * 1024),
    maxSegmentRecords: z.number().int().min(1).default(10_000),
    /**
     * Compact the WAL (rewrite it as what is still live) once about this many bytes were
     * appended since the last compaction. Small values compact often; tests use them to crash
     * nodes mid-compaction.
     */
    walCompactionBytes: z
      .number()
      .int()
      .min(1024)
      .default(DEFAULT_STREAM_NODE_OPTIONS.walCompactionBytes)
      .describe('Compact the WAL once about this many bytes were appended since the last compaction'),
    liveness: livenessOptions.default({ ...LIVENESS, detector: { kind: 'fixed' } }),
    /** The cluster budget of maintenance windows (give every node the same). */
    maintenance: z
      .object({
        /** Nodes whose windows may overlap. */
        maxNodesInMaintenance: z.number().int().min(1).max(10_000).default(1),
        /** When set: overlapping windows must all be on nodes sharing one value of this label (one zone at a time). */
        oneValueOf: labelKeySchema.optional(),
      })
      .strict()
      .default({ maxNodesInMaintenance: 1 }),
  })
  .strict();

export type StreamNodeConfig = z.output<typeof streamNodeOptions>;
