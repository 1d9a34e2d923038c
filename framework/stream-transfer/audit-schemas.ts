import { z } from 'zod';
import { STREAM_AUDIT_KINDS } from './audit-trail.js';

// The answers of a stream node's audit routes, as published in its OpenAPI document.

const index = z.number().int().min(0);

/** One sealed record as GET /v1/admin/audit answers it (the stored record, with from/to/epoch_after named so). */
export const streamAuditRecordSchema = z.looseObject({
  id: z.string().describe('<commit_index>-<seq>'),
  authority: z.string().describe("The trail's name"),
  kind: z.enum(STREAM_AUDIT_KINDS),
  subject_type: z.enum(['stream', 'node', 'cluster']),
  subject: z.string(),
  from: z.string().nullable(),
  to: z.string().nullable(),
  source: z.string(),
  target: z.string(),
  epoch_before: index.optional(),
  epoch_after: index,
  epoch: index,
  actor: z.string().describe('The authenticated principal, or system:<component> for an automatic change'),
  reason: z.string(),
  cause: z.string().optional().describe('The id of the drain, rebalance, failover or liveness record this one belongs to'),
  evidence: z.string().optional(),
  barrier: index,
  commit_term: index,
  commit_index: index,
  seq: index.optional(),
  time: index.optional().describe('Wall-clock milliseconds as the proposing member read its clock (absent on a keyed change)'),
  prev_hash: z.string().optional(),
  hash: z.string().optional(),
});

export const streamAuditPageSchema = z.object({
  trail: z.string(),
  records: z.array(streamAuditRecordSchema),
  next: z.string().nullable().describe('The `before` of the next (older) page, null once the trail is read to its start'),
});

const trailHead = z.object({ records: index, hash: z.string(), commit_index: index, seq: index });

export const streamAuditChainSchema = z.object({
  trail: z.string(),
  head: trailHead.nullable().describe('The newest record sealed, as the replicated state holds it'),
  anchors: z.array(trailHead).describe('Every 64th head, the most recent kept: what a verify checks the store against'),
});

const record = {
  id: '12-1',
  authority: 'streams',
  kind: 'transfer_proposed',
  subject_type: 'stream',
  subject: 'orders',
  from: 'n1',
  to: 'n2',
  source: 'n1',
  target: 'n2',
  epoch_before: 1,
  epoch_after: 1,
  epoch: 1,
  actor: 'admin',
  reason: 'drain',
  cause: '12-0',
  barrier: 0,
  commit_term: 2,
  commit_index: 12,
  seq: 1,
  time: 1796220460838,
  prev_hash: '9f2c…',
  hash: '4a71…',
} as const;

export const streamAuditExamples = {
  record,
  page: { trail: 'streams', records: [record], next: '12-1' },
  chain: { trail: 'streams', head: { records: 40, hash: '4a71…', commit_index: 12, seq: 1 }, anchors: [] },
};
