import { z } from 'zod';

// The answers of the plan routes (plan-routes.ts, plan-view.ts), as the OpenAPI document publishes them.

const count = z.number().int().min(0);
const id = z.string().describe('A stream or node id');
const beforeAfter = z.object({ before: count, after: count });

const planGoalSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('rebalance') }),
    z.object({ type: z.literal('drain'), nodes: z.array(id) }),
    z.object({ type: z.literal('restore-preferences') }),
  ])
  .describe('What the plan is for');

const planProgressSchema = z.object({
  started: count,
  done: count.describe('Started moves that have settled'),
  inFlight: count,
  waiting: count.describe('Moves not started yet'),
  skipped: count.describe('Moves no longer valid when their turn came'),
  dropped: count.describe('Moves a cancel dropped before they started'),
});

export const planSummarySchema = z.object({
  id: z.string().describe('plan-<log index of its creation>'),
  goal: planGoalSchema,
  limits: z.object({ maxConcurrent: count, movesPerSecond: z.number().nullable().describe('null: as fast as maxConcurrent allows') }),
  status: z.enum(['planned', 'running', 'completed', 'cancelled']),
  view: count.describe('The log index it was planned at: its view of the metadata'),
  stale: z.boolean().describe('The metadata has changed since (nodes, owners, placements, transfers): execute answers 412'),
  planned: count.describe('Moves in the plan'),
  actor: z.string().describe('Who created it'),
  cause: z.string().nullable().describe("The audit record of its execution, which its moves' records name as their cause; null until executed"),
  progress: planProgressSchema,
});

export const planSchema = planSummarySchema.extend({
  moves: z
    .array(z.object({ stream: id, target: id, source: id.nullable().describe('The node it leaves; null when the stream is gone') }))
    .describe('Its first moves: those waiting, once it runs'),
  truncated: z.boolean().describe('More moves wait than `moves` shows'),
  effect: z
    .object({
      byNode: z.array(z.object({ node: id, before: count, after: count, out: count, in: count })).describe('Streams per node before and after (owned and arriving)'),
      byLabel: z.array(z.object({ label: z.string(), value: z.string(), before: count, after: count })).describe('Streams per label value (e.g. per zone) before and after'),
      violations: z
        .object({
          required: beforeAfter.describe('Streams whose owner lacks a label their placement requires'),
          preferences: beforeAfter.describe('Streams whose owner lacks one of their preferred labels'),
          spread: beforeAfter.describe('Of the spread groups the plan moves streams of: those with one label value more than one stream above another'),
        })
        .describe('Placement violations before and after'),
      unplaceable: z.array(id).describe('Streams the goal would move that no node can take as their placement asks (at most 100 named)'),
      unplaceableCount: count,
    })
    .describe('Predicted when it was planned; each move is checked again when it starts'),
});

export const planListSchema = z.object({ plans: z.array(planSummarySchema).describe('Newest first: the last 16 plans') });

const summary = {
  id: 'plan-812',
  goal: { type: 'drain', nodes: ['n3'] },
  limits: { maxConcurrent: 4, movesPerSecond: 10 },
  status: 'planned',
  view: 2210,
  stale: false,
  planned: 2,
  actor: 'ops',
  cause: null,
  progress: { started: 0, done: 0, inFlight: 0, waiting: 2, skipped: 0, dropped: 0 },
} as const;

export const planExamples = {
  create: { goal: 'drain', nodes: ['n3'], limits: { maxConcurrent: 4, movesPerSecond: 10 } },
  limits: { maxConcurrent: 8, movesPerSecond: null },
  plan: {
    ...summary,
    moves: [
      { stream: 'orders', target: 'n1', source: 'n3' },
      { stream: 'payments', target: 'n2', source: 'n3' },
    ],
    truncated: false,
    effect: {
      byNode: [
        { node: 'n1', before: 10, after: 11, out: 0, in: 1 },
        { node: 'n2', before: 10, after: 11, out: 0, in: 1 },
        { node: 'n3', before: 2, after: 0, out: 2, in: 0 },
      ],
      byLabel: [
        { label: 'zone', value: 'z1', before: 10, after: 11 },
        { label: 'zone', value: 'z2', before: 12, after: 11 },
      ],
      violations: { required: { before: 0, after: 0 }, preferences: { before: 1, after: 1 }, spread: { before: 0, after: 0 } },
      unplaceable: [],
      unplaceableCount: 0,
    },
  },
  list: { plans: [summary] },
} as const;

/** The plan once executed: one move in flight, one waiting. */
export const runningPlanExample = {
  ...planExamples.plan,
  status: 'running',
  cause: '2231-0',
  moves: [planExamples.plan.moves[1]],
  progress: { started: 1, done: 0, inFlight: 1, waiting: 1, skipped: 0, dropped: 0 },
} as const;
