import type { z } from 'zod';
import { ETAG_HEADER, IDEMPOTENCY_KEY_HEADER, IF_MATCH_HEADER, type HeaderParam, type OperationSpec, type ResponseSpec } from '@baton/http';
import { ADMIN_SCOPE, REPLAYED_HEADER } from './admin-router.js';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from './listing.js';

// The pieces every operation of a stream node's OpenAPI document is described with (the
// shared problem answers, the Idempotency-Key, the admin scope), so the operations can live in
// files by topic.

export const PAGING = `Paged: at most \`limit\` items (default ${DEFAULT_PAGE_LIMIT}, at most ${MAX_PAGE_LIMIT}); \`next\` is the \`after\` of the next page, null on the last.`;

/**
 * The problem answers each route can give, by status. Shared causes: 400 for any invalid
 * path, query or body; 503 when the metadata consensus cannot answer (no leader, outcome
 * unknown: retry, with the same Idempotency-Key for a change); 401/403 on the admin API;
 * 413/415 wherever a JSON body is read.
 */
export const PROBLEMS = {
  400: 'Invalid input: the problem names each field at fault and why',
  401: 'No valid bearer token',
  403: `The token lacks the "${ADMIN_SCOPE}" scope`,
  404: 'The stream or node does not exist',
  409: 'Refused by the current metadata (e.g. not the owner: the body names the owner-to-be, its address and epoch)',
  413: 'The body is larger than this route accepts',
  415: 'The body is not application/json',
  503: 'Unavailable for now (no consensus leader, a handoff still settling, the node stopping); see Retry-After',
} as const;
export type ProblemStatus = keyof typeof PROBLEMS;

/**
 * Every admin write may be keyed. The key rides into consensus with the command, so the first
 * decision is kept in the replicated idempotency window (the consensus plugin's
 * `idempotencyWindow`, 10000 keyed commands by default, oldest forgotten first; carried in
 * snapshots, so it outlives restarts and leader changes).
 */
export const KEY_HEADER: HeaderParam = {
  name: IDEMPOTENCY_KEY_HEADER,
  description:
    'Optional: 1 to 128 ASCII letters, digits and . _ : ~ -. The same key with the same request answers the first decision again, ' +
    'from any member (Idempotent-Replayed: true); the same key with another request answers 422. Echoed in the response.',
};
export const keyed = {
  422: 'The Idempotency-Key already names a different request',
};
/** Answers of a keyed write carry these headers. */
export const keyedAnswer = (description: string, schema: z.ZodType, example: unknown): ResponseSpec => ({
  description,
  schema,
  example,
  headers: {
    [IDEMPOTENCY_KEY_HEADER]: { description: 'The key the request was sent with' },
    [REPLAYED_HEADER]: { description: '"true" when this answer is the decision an earlier request under the key got' },
  },
});
export const epochMatch: HeaderParam = {
  name: IF_MATCH_HEADER,
  description: 'Optional: "<epoch>", the ETag of GET /v1/streams/{stream}: move it only while it is still at that epoch (or send expected_epoch)',
};
export const streamsMatch: HeaderParam = {
  name: IF_MATCH_HEADER,
  description: 'Optional: "<streams>", the ETag of GET /v1/admin/nodes/{node}: act only while the node still owns that many streams (or send expected_streams)',
};
export const malformedMatch = 'Invalid input, or an If-Match that is not one quoted version ("7"), or one that disagrees with the body';
export const versionTag = (what: string) => ({ [ETAG_HEADER]: { description: what } });

export function problems(...statuses: ProblemStatus[]): Record<number, string> {
  return Object.fromEntries(statuses.map((status) => [status, PROBLEMS[status]]));
}

export function ok(description: string, schema: z.ZodType, example: unknown): ResponseSpec {
  return { description, schema, example };
}

/** An admin operation: tagged, behind the admin scope, with its auth answers. */
export const admin = (spec: Omit<OperationSpec, 'scope' | 'tags'>): OperationSpec => ({
  ...spec,
  tags: ['admin'],
  scope: ADMIN_SCOPE,
  // Every admin route is behind the scope check.
  responses: { ...spec.responses, ...problems(401, 403) },
});

