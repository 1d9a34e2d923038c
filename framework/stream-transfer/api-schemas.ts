import { z } from 'zod';
import { placementSchema } from './labels.js';

// The answers of a stream node's data and admin API, as its OpenAPI document publishes them.
// The handlers build these bodies from typed values (model.ts, progress.ts, listing.ts); the
// contract tests hold every answer they see to these schemas.

const offset = z.number().int().min(0);
const count = z.number().int().min(0);
const epoch = z.number().int().min(1).describe("The owner's session number: each open is a new epoch");
const id = z.string().describe('A stream or node id');
const cursor = z.string().nullable().describe('The `after` of the next page, null on the last');

export const pendingTransferSchema = z.object({
  stream: id,
  source: id,
  target: id,
  epoch: epoch.describe('The epoch when the transfer was accepted; the target opens at a later one'),
  reason: z.enum(['admin', 'drain', 'rebalance', 'maintenance']).describe('Why it was proposed: an operator (admin), a drain, a rebalance or plan, or a maintenance window handing streams back'),
  since: z.number().int().min(0).describe('Log index of the command that created it'),
  proposal: z.string().optional().describe('The id of the audit record of its proposal'),
  cause: z.string().optional().describe('The id of the audit record of the drain or rebalance it belongs to'),
});

export const appendResultSchema = z.object({
  stream: id,
  epoch,
  first: offset.describe('Offset of the first record appended (of the first attempt, for a duplicate)'),
  count,
  offsets: z.array(offset),
  duplicate: z.boolean().describe('A retried (producer, seq): answered with its first offsets, not appended again'),
  node: id.describe('The node that acknowledged it'),
});

export const readResultSchema = z.object({
  stream: id,
  from: offset,
  records: z.array(z.object({ offset, body: z.string() })),
  next: offset.describe('The `from` of the next read'),
});

export const streamDescriptionSchema = z.object({
  stream: id,
  owner: id,
  address: z.string().optional().describe("The owner's base URL, when registered"),
  epoch,
  state: z.enum(['open', 'closed']),
  tail: offset.describe('Offset the next record gets (exact on the serving owner; a lower bound elsewhere)'),
  transfer: pendingTransferSchema.optional().describe('The transfer under way, if any'),
  placement: placementSchema.optional().describe('Where the stream may and would rather live, as given at create'),
});

export const ownershipEventSchema = z.object({
  stream: id,
  owner: id,
  address: z.string().nullable().describe("The owner's base URL; null when it is not registered"),
  epoch,
  state: z.enum(['open', 'closed']),
  pending_target: id.nullable().describe('The node a pending transfer moves the stream to; null when none is pending'),
  pending_target_address: z.string().nullable().describe("That node's base URL; null without a pending transfer"),
});

export const nodeStatusSchema = z.object({
  id,
  address: z.string(),
  slots: z.number().int().min(1),
  draining: z.boolean(),
  owned: count,
  incoming: count,
  outgoing: count,
  drained: z.boolean().describe('Draining and owning nothing: safe to take down'),
  liveness: z.enum(['Alive', 'Suspect', 'Dead']),
  lastRenewalMsAgo: z.number().min(0).nullable().describe("Since the node's last lease renewal, as the metadata leader saw it; null elsewhere"),
  labels: z.record(z.string(), z.string()).describe('What placements match against (e.g. {"zone": "z1"}); {} when none'),
  maintenance: z
    .object({ start: z.string(), end: z.string(), movesPerSecond: z.number(), active: z.boolean().describe('Begun: the node is draining for it') })
    .nullable()
    .describe('Its maintenance window (ISO 8601 times), scheduled or under way; null when none'),
  returning: z.boolean().describe('Its window is over and streams are being handed back to it'),
});

export const drainProgressSchema = nodeStatusSchema.extend({
  drainInFlight: count.describe('Transfers the drain keeps in flight at once'),
  remaining: count.describe('Streams still to leave'),
});

export const nodeRegisteredSchema = z.object({ node: nodeStatusSchema, duplicate: z.boolean() });
export const nodePageSchema = z.object({ nodes: z.array(nodeStatusSchema), next: cursor });

export const failoverResultSchema = drainProgressSchema.extend({
  moved: count.describe('Streams given to live nodes'),
  remaining: count.describe('Streams left on the node: no node had a free slot, or none satisfies their placement'),
  unplaceable: z.array(id).describe('Streams left because no live node satisfies their placement (the first 100)'),
  duplicate: z.boolean(),
});

export const streamCreatedSchema = z.object({ stream: id, owner: id, epoch, duplicate: z.boolean() });

export const placementSetSchema = z.object({
  stream: id,
  owner: id,
  epoch,
  placement: placementSchema,
  satisfied: z.boolean().describe('Whether the owner carries the required labels of the new placement (nothing moved either way)'),
});

export const streamSummarySchema = z.object({
  stream: id,
  owner: id,
  epoch,
  state: z.enum(['open', 'closed']),
  tail: offset,
  transfer: pendingTransferSchema.pick({ source: true, target: true, reason: true }).nullable(),
});
export const streamPageSchema = z.object({ streams: z.array(streamSummarySchema), next: cursor, total: count });

const pendingStatus = pendingTransferSchema.extend({ status: z.literal('pending') });
export const transferProposedSchema = z.discriminatedUnion('status', [
  pendingStatus.extend({ duplicate: z.boolean() }),
  z.object({ status: z.literal('settled'), stream: id, owner: id, duplicate: z.literal(true) }),
]);
export const transferStatusSchema = z.discriminatedUnion('status', [
  pendingStatus,
  z.object({ status: z.literal('settled'), stream: id, owner: id, epoch }),
]);
export const transferPageSchema = z.object({ transfers: z.array(pendingTransferSchema), next: cursor, total: count });

const planPreview = {
  planned: count.describe('Moves in the plan'),
  moves: z.array(z.object({ stream: id, target: id, source: id.nullable().describe('The node it leaves; null when the stream is gone') })),
  truncated: z.boolean().describe('More moves are planned than `moves` shows'),
  byNode: z.array(z.object({ node: id, out: count, in: count })),
};
export const rebalancePageSchema = z.object({
  planned: count,
  started: count,
  skipped: count,
  maxInFlight: count,
  waiting: count.describe('Moves not started yet (all of them, not only this page)'),
  cause: z.string().optional().describe("The id of the plan's audit record, which each move's record names as its cause"),
  queue: z.array(z.object({ stream: id, target: id, position: count })),
  next: cursor,
});
export const rebalancePlanSchema = z.object({ dryRun: z.literal(true), ...planPreview });
export const rebalanceStartedSchema = z.object({ dryRun: z.literal(false), ...planPreview, progress: rebalancePageSchema });

/** The extension members of the stream variant's problems (problems.ts, the admin router). */
export const streamProblemExtensions = {
  stream: id.describe('The stream the problem is about'),
  owner: id.describe('On 409 not-owner: the owner, or the owner-to-be during a handoff: send the request there'),
  address: z.string().nullable().describe("On 409 not-owner: that node's base URL (null when it registered none)"),
  epoch: epoch.describe('On 409 not-owner: the epoch the request will meet there'),
  transferring: z.boolean().describe('On 409 not-owner: the stream is moving to `owner`'),
  waited_ms: z.number().min(0).describe('On 503 handoff-in-progress: how long the request was parked'),
  producer: z.string().describe('The producer id at fault'),
  seq: z.number().int().describe('On 409 stale-producer-sequence: the seq sent'),
  last_seq: z.number().int().describe('On 409 stale-producer-sequence: the last seq appended for the producer'),
  node: id.describe('The node the problem is about'),
  unplaceable: z.array(id).describe('On 409 placement-unsatisfiable: the streams no node can take as their placement asks'),
  plan: z.string().describe('The plan the problem is about'),
  plan_view: count.describe('On 412 plan-stale: the log index the plan was built at'),
  current_view: count.describe('On 412 plan-stale: the log index of the last change to nodes, owners, placements or transfers'),
};
