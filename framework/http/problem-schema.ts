import { z } from 'zod';
import { PROBLEM_TYPE_PREFIX } from './problem.js';

/**
 * The extension members the shared HTTP pieces add to a problem (auth, body reading, validation,
 * idempotency keys, request ids). A variant adds its own through `ApiDocument.problemExtensions`,
 * so each document's one `Problem` component names every member its listener can send.
 */
export const sharedProblemExtensions = {
  request_id: z.string().describe('The id of this request, as logged by the member: quote it when reporting a problem'),
  invalid_fields: z
    .array(
      z.object({
        path: z.string().describe('Dotted path of the field inside the path, query or body (`records.0.body`); empty for the value itself'),
        message: z.string(),
      }),
    )
    .describe('On 400: every field at fault and why'),
  required_scope: z.string().describe('On 401/403: the scope the route asks for'),
  principal: z.string().describe('On 403: the principal the token stands for'),
  limit_bytes: z.number().int().describe('On 413: the largest body this route reads'),
  allowed: z.array(z.string()).describe('On 405: the methods the path allows (also in Allow)'),
  reason: z.string().describe('A machine-readable reason, where the type has several (e.g. not_ready: no_leader)'),
  store: z.string().describe('On 503: the store that could not be read or written'),
  kind: z.string().describe('On 400 invalid-identity: the kind of identity refused (authority, operation)'),
  input: z.string().describe('On 400 invalid-identity: the input refused'),
  member: z.string().describe('The member the problem is about (the one answering, named in a request, or the authenticated peer)'),
  claimed: z.string().describe('On 403 of a peer route: the member the request claimed to speak for'),
} satisfies Record<string, z.ZodType>;

/**
 * The problem+json body of every error answer (RFC 9457), with the extension members given.
 * Members nobody declared may still appear: a client must ignore what it does not know.
 */
export function problemSchema(extensions: Record<string, z.ZodType>): z.ZodType {
  const optional = Object.fromEntries(Object.entries(extensions).map(([name, schema]) => [name, schema.optional()]));
  return z
    .looseObject({
      type: z.string().describe(`What kind of problem: a URN under ${PROBLEM_TYPE_PREFIX} (stable, switch on it), or about:blank`),
      title: z.string().describe('Short summary of the kind of problem'),
      status: z.number().int().min(400).max(599).describe('The HTTP status, repeated'),
      detail: z.string().describe('What went wrong for this request and what to do about it'),
      instance: z.string().optional().describe('The request path this occurrence is about'),
      ...optional,
    })
    .meta({
      examples: [
        {
          type: `${PROBLEM_TYPE_PREFIX}bad-request`,
          title: 'Bad Request',
          status: 400,
          detail: 'records: send at least one record',
          instance: '/v1/streams/orders/records',
          invalid_fields: [{ path: 'records', message: 'send at least one record' }],
          request_id: '2f1c9a7e4b',
        },
      ],
    });
}
