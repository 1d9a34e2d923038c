import type { OperationSpec } from '@baton/http';
import { z } from 'zod';
import { batchSchema, RAFT_HTTP_BASE, requestSchema } from './peer-wire.js';

const PEER_REFUSALS = {
  400: 'Malformed peer message, or JSON past the nesting or size bounds (refused before parsing)',
  403: 'The sender named is not the authenticated member, or not a member of this cluster',
  413: 'The body or a frame is over its bound (maxMessageBytes; maxLargeMessageBytes on /messages)',
  503: 'At the bound of concurrent peer work, or the member is stopping; see Retry-After',
};
const PEER_AUTH_NOTE =
  'Authenticated by the sending member\'s own credential (X-Baton-Member, X-Baton-Peer-Secret); under `insecure: true` by X-Baton-Member alone.';

/**
 * What the routes of `router()` are, for the OpenAPI document of the listener they are mounted on.
 *
 * @internal
 */
export const RAFT_PEER_OPERATIONS: readonly OperationSpec[] = [
  {
    method: 'post',
    path: `${RAFT_HTTP_BASE}/stream`,
    summary: 'A long-lived stream of one-way Raft messages from a peer, newline-delimited JSON frames {channel, body}',
    description: `${PEER_AUTH_NOTE} The cluster and the sender are named by the X-Baton-Cluster and X-Baton-From headers.`,
    operationId: 'raftStream',
    tags: ['internal'],
    peer: true,
    params: {
      headers: [
        { name: 'X-Baton-Cluster', description: 'The cluster id', required: true },
        { name: 'X-Baton-From', description: 'The sending member (must be the authenticated one)' },
      ],
    },
    responses: { 204: 'The sender ended the stream', ...PEER_REFUSALS },
  },
  {
    method: 'post',
    path: `${RAFT_HTTP_BASE}/messages`,
    summary: 'A batch of one-way messages too large for a stream frame (snapshot chunks, large appends), read one at a time per sender, each within a deadline',
    description: PEER_AUTH_NOTE,
    operationId: 'raftMessages',
    tags: ['internal'],
    peer: true,
    requestBody: batchSchema,
    requestExample: { cluster: 'c-7f3a', from: 'n2', messages: [{ channel: 'raft', body: { type: 'append', term: 3 } }] },
    responses: {
      204: 'Delivered to the member',
      408: 'The body did not arrive whole within largeMessageDeadlineMs; the connection is closed',
      ...PEER_REFUSALS,
    },
  },
  {
    method: 'post',
    path: `${RAFT_HTTP_BASE}/requests`,
    summary: "A request from a peer awaiting an answer (a follower forwarding a proposal or membership change to the leader), its body read within a deadline",
    description: PEER_AUTH_NOTE,
    operationId: 'raftRequest',
    tags: ['internal'],
    peer: true,
    requestBody: requestSchema,
    requestExample: { cluster: 'c-7f3a', from: 'n2', message: { channel: 'propose', body: { command: { type: 'noop' } } } },
    responses: {
      200: {
        description: "The channel handler's answer",
        schema: z.unknown().describe("The handler's JSON answer, in the format of the channel named by the request"),
        example: { ok: true },
      },
      404: 'No handler for this channel',
      408: 'The body did not arrive whole within requestDeadlineMs; the connection is closed',
      500: 'The channel handler failed (the member keeps running)',
      ...PEER_REFUSALS,
    },
  },
];
