import { z } from 'zod';
import { ID_PATTERN, MAX_NODE_SLOTS } from './model.js';
import type { StreamCommand } from './commands.js';
import { producerKeySchema } from './producer-marks.js';
import { labelKeySchema, labelsSchema, placementSchema } from './labels.js';

/** The fastest hand-back a maintenance window may ask for. */
export const MAX_MOVES_PER_SECOND = 1_000;

/**
 * The shape every command must have before `apply` looks at it. Commands arrive from the log,
 * which other members wrote, so `apply` checks them rather than trusting the type.
 */
const id = z.string().regex(ID_PATTERN);
const count = z.number().int().nonnegative();
const epoch = z.number().int().positive();
const producerMark = z.object({ seq: count, first: count, count: count });

/** Nodes one drain plan empties at most. */
export const MAX_PLAN_NODES = 64;
/** Moves in flight at once a plan may ask for at most. */
export const MAX_PLAN_CONCURRENT = 10_000;
const planId = z.string().regex(/^plan-\d{1,16}$/);
const planLimits = z
  .object({ maxConcurrent: z.number().int().positive().max(MAX_PLAN_CONCURRENT), movesPerSecond: z.number().positive().max(MAX_MOVES_PER_SECOND).optional() })
  .strict();
export const planGoalSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('rebalance') }).strict(),
  z.object({ type: z.literal('drain'), nodes: z.array(id).min(1).max(MAX_PLAN_NODES) }).strict(),
  z.object({ type: z.literal('restore-preferences') }).strict(),
]);

/** Acknowledgements one entry carries at most (the projection sends batches of 512). */
export const MAX_AUDIT_ACK_BATCH = 1024;

/** The proposer's stamp for the audit record: bounded, as everything another member wrote. */
const stamp = {
  actor: z.string().min(1).max(256).optional(),
  at: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
  evidence: z.string().max(1024).optional(),
};

const commandShapes = [
  z.object({
    type: z.literal('register-node'),
    node: id,
    address: z.string().min(1).max(2048),
    slots: z.number().int().positive().max(MAX_NODE_SLOTS),
    labels: labelsSchema.optional(),
  }),
  z.object({ type: z.literal('create-stream'), stream: id, node: id.optional(), placement: placementSchema.optional() }),
  z.object({ type: z.literal('set-placement'), stream: id, placement: placementSchema }),
  z.object({
    type: z.literal('schedule-maintenance'),
    node: id,
    startAt: count.max(Number.MAX_SAFE_INTEGER),
    endAt: count.max(Number.MAX_SAFE_INTEGER),
    movesPerSecond: z.number().positive().max(MAX_MOVES_PER_SECOND),
    budget: z.object({ maxNodes: z.number().int().positive().max(10_000), oneValueOf: labelKeySchema.optional() }),
  }),
  z.object({ type: z.literal('begin-maintenance'), node: id }),
  z.object({ type: z.literal('end-maintenance'), node: id }),
  z.object({ type: z.literal('maintenance-returned'), node: id }),
  z.object({
    type: z.literal('transfer'),
    stream: id,
    target: id,
    reason: z.enum(['admin', 'drain', 'rebalance', 'maintenance']).optional(),
    expectedOwner: id.optional(),
    expectedEpoch: count.optional(),
  }),
  z.object({
    type: z.literal('close'),
    stream: id,
    node: id,
    epoch,
    tail: count,
    producers: z.record(producerKeySchema, producerMark),
  }),
  z.object({ type: z.literal('complete'), stream: id, source: id, target: id, epoch }),
  z.object({ type: z.literal('reopen'), stream: id, node: id, epoch }),
  z.object({ type: z.literal('drain'), node: id, maxInFlight: z.number().int().positive().optional(), expectedStreams: count.optional() }),
  z.object({ type: z.literal('undrain'), node: id }),
  z.object({ type: z.literal('rebalance'), maxInFlight: z.number().int().positive().optional() }),
  z.object({ type: z.literal('node-liveness'), node: id, liveness: z.enum(['Alive', 'Suspect', 'Dead']) }),
  z.object({ type: z.literal('failover'), node: id, force: z.boolean().optional(), expectedStreams: count.optional() }),
  z.object({ type: z.literal('fenced'), stream: id, node: id, epoch, tail: count }),
  z.object({ type: z.literal('create-plan'), goal: planGoalSchema, limits: planLimits }),
  z.object({ type: z.literal('execute-plan'), plan: planId }),
  z.object({
    type: z.literal('set-plan-limits'),
    plan: planId,
    maxConcurrent: z.number().int().positive().max(MAX_PLAN_CONCURRENT).optional(),
    movesPerSecond: z.number().positive().max(MAX_MOVES_PER_SECOND).nullable().optional(),
  }),
  z.object({ type: z.literal('cancel-plan'), plan: planId }),
  z.object({ type: z.literal('allow-plan-moves'), plan: planId, moves: z.number().int().positive().max(MAX_MOVES_PER_SECOND) }),
  z.object({
    type: z.literal('ack-audit'),
    ids: z.array(z.string().min(1).max(64)).max(MAX_AUDIT_ACK_BATCH),
    member: z.string().min(1).max(256),
  }),
] as const;

export const streamCommandSchema = z.discriminatedUnion(
  'type',
  commandShapes.map((shape) => shape.extend(stamp)) as unknown as [
    (typeof commandShapes)[number],
    ...(typeof commandShapes)[number][],
  ],
);

export function parseCommand(raw: unknown): { ok: true; command: StreamCommand } | { ok: false; message: string } {
  const parsed = streamCommandSchema.safeParse(raw);
  if (parsed.success) return { ok: true, command: parsed.data as StreamCommand };
  const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(command)'}: ${i.message}`);
  return { ok: false, message: `malformed command: ${issues.join('; ')}` };
}
