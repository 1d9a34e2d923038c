import { ApiDocument, type OperationSpec } from '@baton/http';
import {
  auditIdParam,
  createStreamBody,
  drainBody,
  failoverBody,
  nodeParam,
  rebalanceBody,
  setPlacementBody,
  registerNodeBody,
  transferBody,
} from './admin-router.js';
import { STREAM_APPEND_SCOPE, STREAM_READ_SCOPE } from './data-access.js';
import { appendBody, readQuery, streamParam } from './data-router.js';
import { pageQuery, transferPageQuery } from './listing.js';
import { rebalancePageQuery } from './rebalance-listing.js';
import { streamExamples as ex } from './api-examples.js';
import { PAGING, PROBLEMS, KEY_HEADER, admin, epochMatch, keyed, keyedAnswer, malformedMatch, ok, problems, streamsMatch, versionTag } from './api-document-parts.js';
import { planOps } from './plan-api-document.js';
import {
  appendResultSchema,
  drainProgressSchema,
  failoverResultSchema,
  nodePageSchema,
  ownershipEventSchema,
  placementSetSchema,
  nodeRegisteredSchema,
  readResultSchema,
  rebalancePageSchema,
  rebalancePlanSchema,
  rebalanceStartedSchema,
  streamCreatedSchema,
  streamDescriptionSchema,
  streamPageSchema,
  streamProblemExtensions,
  transferPageSchema,
  transferProposedSchema,
  transferStatusSchema,
} from './api-schemas.js';
import { maintenanceBody } from './maintenance-routes.js';
import { AUDIT_SCAN_BUDGET, DEFAULT_AUDIT_PAGE, MAX_AUDIT_PAGE, auditPageQuery } from './audit-listing.js';
import { streamAuditChainSchema, streamAuditExamples, streamAuditPageSchema, streamAuditRecordSchema } from './audit-schemas.js';

/** The data API's own auth answers: its scopes are per action, and may name streams by pattern. */
function dataAuth(scope: string): Record<number, string> {
  return {
    401: 'No valid bearer token (unless the node lets anonymous callers do this: dataPlane.anonymous)',
    403: `The token lacks the "${scope}" scope for this stream ("${scope}" or "${scope}:<pattern>")`,
  };
}

const streamOps: OperationSpec[] = [
  {
    method: 'post',
    path: '/v1/streams/{stream}/records',
    summary: 'Append records to a stream (on its owner; 409 elsewhere names where to go)',
    operationId: 'appendRecords',
    description:
      'Acknowledged once durable. A retried (producer, seq) is answered with its first offsets, not appended twice. ' +
      'On the owner-to-be during a handoff the request parks until the transfer settles (up to the park timeout, then 503).',
    tags: ['data'],
    scope: STREAM_APPEND_SCOPE,
    params: { path: streamParam },
    requestBody: appendBody,
    requestExample: ex.append,
    responses: {
      200: ok('Offsets and epoch of the appended records', appendResultSchema, ex.appended),
      ...problems(400, 404, 409, 413, 415, 503),
      409: { description: PROBLEMS[409], example: ex.notOwner },
      ...dataAuth(STREAM_APPEND_SCOPE),
      403: `The token lacks the "${STREAM_APPEND_SCOPE}" scope for this stream, or the producer id belongs to another principal`,
      408: 'The body did not arrive within the deadline',
    },
  },
  {
    method: 'get',
    path: '/v1/streams/{stream}/records',
    summary: 'Read durable records in offset order, from any node',
    operationId: 'readRecords',
    tags: ['data'],
    scope: STREAM_READ_SCOPE,
    params: { path: streamParam, query: readQuery },
    responses: { 200: ok('Records from the given offset', readResultSchema, ex.read), ...problems(400, 404, 503), ...dataAuth(STREAM_READ_SCOPE) },
  },
  {
    method: 'get',
    path: '/v1/streams/{stream}/ownership',
    summary: "A stream's owner, epoch and pending target; with Accept: text/event-stream, a feed of every change",
    operationId: 'watchStreamOwnership',
    description:
      'As JSON: the ownership now. As server-sent events: an `ownership` event at once and on every change (a pending transfer ' +
      'added or settled, a completion, a drain or rebalance move, a failover), and a heartbeat comment every 15 s. ' +
      'A client reopens at `pending_target_address` (or `address`) before its next append is refused. ' +
      'Each node holds a bounded number of watchers (503 beyond, with Retry-After); a watcher that does not read is dropped.',
    tags: ['data'],
    scope: STREAM_READ_SCOPE,
    params: { path: streamParam },
    responses: {
      200: {
        ...ok('The ownership now (JSON), or its feed (text/event-stream)', ownershipEventSchema, ex.ownership),
        headers: versionTag('"<epoch>": what If-Match on a transfer of the stream names (JSON answer)'),
        events: { name: 'ownership', schema: ownershipEventSchema, example: ex.ownership },
      },
      ...problems(400, 404, 503),
      503: 'Unavailable for now (no consensus leader), or this node holds as many watchers as it may (Retry-After)',
      ...dataAuth(STREAM_READ_SCOPE),
    },
  },
  {
    method: 'get',
    path: '/v1/streams/{stream}',
    summary: 'A stream: owner, epoch, state, tail and any pending transfer',
    operationId: 'describeStream',
    tags: ['data'],
    scope: STREAM_READ_SCOPE,
    params: { path: streamParam },
    responses: {
      200: { ...ok('The stream metadata', streamDescriptionSchema, ex.described), headers: versionTag('"<epoch>": what If-Match on a transfer of the stream names') },
      ...problems(400, 404, 503),
      ...dataAuth(STREAM_READ_SCOPE),
    },
  },
];

const adminOps: OperationSpec[] = [
  admin({
    method: 'post',
    path: '/v1/admin/nodes',
    summary: 'Register a node (its address and slots); registering it again is a no-op',
    operationId: 'registerNode',
    params: { headers: [KEY_HEADER] },
    requestBody: registerNodeBody,
    requestExample: ex.register,
    responses: {
      200: keyedAnswer('Already registered as given', nodeRegisteredSchema, { ...ex.registered, duplicate: true }),
      201: keyedAnswer('Registered', nodeRegisteredSchema, ex.registered),
      ...problems(400, 409, 413, 415, 503),
      ...keyed,
    },
  }),
  admin({
    method: 'get',
    path: '/v1/admin/nodes',
    summary: 'The registered nodes, by id',
    operationId: 'listNodes',
    description: `${PAGING} \`after\` is the id of the last node of the previous page.`,
    params: { query: pageQuery },
    responses: { 200: ok('One page of nodes', nodePageSchema, ex.nodes), ...problems(400, 503) },
  }),
  admin({
    method: 'get',
    path: '/v1/admin/nodes/{node}',
    summary: 'A node and its drain progress',
    operationId: 'getNode',
    params: { path: nodeParam },
    responses: {
      200: { ...ok('The node and its drain progress', drainProgressSchema, ex.node), headers: versionTag('"<owned streams>": what If-Match on a drain or failover of the node names') },
      ...problems(400, 404, 503),
    },
  }),
  admin({
    method: 'post',
    path: '/v1/admin/nodes/{node}/drain',
    summary: 'Mark a node draining and move its streams elsewhere, bounded in flight',
    operationId: 'drainNode',
    description: 'With If-Match (or expected_streams) the drain starts only if the node still owns that many streams, decided where the drain is; else 412 naming the count.',
    params: { path: nodeParam, headers: [KEY_HEADER, streamsMatch] },
    // The body is optional; its schema when present.
    requestBody: drainBody.unwrap(),
    requestBodyOptional: true,
    requestExample: ex.drain,
    responses: {
      202: keyedAnswer('Draining; progress in the body, as the drain was decided (a replay answers the same)', drainProgressSchema, ex.draining),
      ...problems(400, 404, 409, 413, 415, 503),
      400: malformedMatch,
      412: 'The node no longer owns the streams expected: nothing changed; the problem names `node` and its `streams`',
      ...keyed,
    },
  }),
  admin({
    method: 'post',
    path: '/v1/admin/nodes/{node}/undrain',
    summary: 'Let a draining node take placements again',
    operationId: 'undrainNode',
    params: { path: nodeParam, headers: [KEY_HEADER] },
    responses: { 200: keyedAnswer('Not draining; progress in the body', drainProgressSchema, ex.undrained), ...problems(400, 404, 409, 503), ...keyed },
  }),
  admin({
    method: 'post',
    path: '/v1/admin/nodes/{node}/failover',
    summary: 'Move every stream of a Dead node (and every transfer from it) to live nodes, fencing the old owner in the store',
    operationId: 'failoverNode',
    description:
      'Refused with 409 for a node that is not Dead (rejected-node-not-dead), and on an object store without conditional puts ' +
      '(fencing-unavailable), unless force is true. The answer counts the streams moved and those left for lack of a free slot. ' +
      'With If-Match (or expected_streams) it moves nothing unless the node still owns that many streams (412 otherwise).',
    params: { path: nodeParam, headers: [KEY_HEADER, streamsMatch] },
    requestBody: failoverBody.unwrap(),
    requestBodyOptional: true,
    requestExample: ex.failover,
    responses: {
      202: keyedAnswer('Failed over; moved and remaining counts and the node status in the body', failoverResultSchema, ex.failedOver),
      ...problems(400, 404, 409, 413, 415, 503),
      400: malformedMatch,
      412: 'The node no longer owns the streams expected: nothing moved; the problem names `node` and its `streams`',
      ...keyed,
    },
  }),
  admin({
    method: 'post',
    path: '/v1/admin/streams',
    summary: 'Create a stream, on a given node or placed on the least loaded one its placement allows',
    description:
      'A `placement` stays with the stream: `require` labels its owner must carry, `prefer` labels chosen first, and `spread` ' +
      '(a group spread evenly over the values of one label, e.g. the partitions of a topic over zones). Every later transfer, ' +
      'drain, rebalance and failover respects the requirement and the spread. A placement naming a label no node carries answers 400.',
    operationId: 'createStream',
    params: { headers: [KEY_HEADER] },
    requestBody: createStreamBody,
    requestExample: ex.create,
    responses: {
      200: keyedAnswer('Already exists as asked', streamCreatedSchema, { ...ex.created, duplicate: true }),
      201: keyedAnswer('Created', streamCreatedSchema, ex.created),
      ...problems(400, 404, 409, 413, 415, 503),
      409: 'The stream exists elsewhere or with another placement; the node is draining, Dead or full; or no node satisfies the placement (placement-unsatisfiable, naming the stream)',
      ...keyed,
    },
  }),
  admin({
    method: 'post',
    path: '/v1/admin/nodes/{node}/maintenance',
    summary: 'Schedule a maintenance window: the node drains at its start, takes no new stream, and gets streams back at its pace after its end',
    operationId: 'scheduleMaintenance',
    description:
      'A window already scheduled on the node (not begun) is replaced. The cluster budget (node.maintenance: maxNodesInMaintenance, ' +
      'and with oneValueOf one label value at a time) bounds the windows that overlap: past it, 409 maintenance-budget. ' +
      'The window ends by itself; DELETE ends it early.',
    params: { path: nodeParam, headers: [KEY_HEADER] },
    requestBody: maintenanceBody,
    requestExample: ex.maintenance,
    responses: {
      201: keyedAnswer('Scheduled: the node with its window', nodeRegisteredSchema.pick({ node: true }), ex.inMaintenance),
      ...problems(400, 404, 409, 413, 415, 503),
      400: 'Invalid input: a window in the past, a duration of 0 or over 30 days, movesPerSecond of 0 or over the limit',
      409: 'Past the maintenance budget (maintenance-budget, naming the windows in the way), or the node is in maintenance already',
      ...keyed,
    },
  }),
  admin({
    method: 'delete',
    path: '/v1/admin/nodes/{node}/maintenance',
    summary: "End a node's maintenance window now (undrained; streams come back at the window's pace)",
    operationId: 'endMaintenance',
    params: { path: nodeParam, headers: [KEY_HEADER] },
    responses: {
      200: keyedAnswer('Ended: the node now', nodeRegisteredSchema.pick({ node: true }), { node: ex.inMaintenance.node }),
      ...problems(400, 404, 503),
      404: 'The node is not registered, or has no maintenance window',
      ...keyed,
    },
  }),
  admin({
    method: 'patch',
    path: '/v1/admin/streams/{stream}',
    summary: "Replace a stream's placement (nothing moves; later transfers, drains, rebalances and failovers respect it)",
    operationId: 'setStreamPlacement',
    params: { path: streamParam, headers: [KEY_HEADER] },
    requestBody: setPlacementBody,
    requestExample: ex.setPlacement,
    responses: {
      200: keyedAnswer('The placement now, and whether the owner carries its required labels', placementSetSchema, ex.placementSet),
      ...problems(400, 404, 413, 415, 503),
      ...keyed,
    },
  }),
  admin({
    method: 'get',
    path: '/v1/admin/streams',
    summary: 'The streams, by id',
    operationId: 'listStreams',
    description: `${PAGING} \`after\` is the id of the last stream of the previous page.`,
    params: { query: pageQuery },
    responses: {
      200: ok('One page of streams, and how many there are', streamPageSchema, ex.streams),
      ...problems(400, 503),
    },
  }),
  admin({
    method: 'post',
    path: '/v1/admin/transfers',
    summary: 'Propose moving a stream to a target node',
    operationId: 'transferStream',
    description:
      'With If-Match: "<epoch>" (or expected_epoch, and expected_owner) the move is accepted only while the stream is still at that epoch ' +
      '(on that owner), decided by the metadata state machine where the move is, so of two operators racing only one passes; else 412.',
    params: { headers: [KEY_HEADER, epochMatch] },
    requestBody: transferBody,
    requestExample: ex.transfer,
    responses: {
      200: keyedAnswer('The same transfer was already proposed or has settled', transferProposedSchema, ex.transferAgain),
      202: keyedAnswer('Pending: routing changed, the handoff is under way', transferProposedSchema, ex.transferPending),
      ...problems(400, 404, 409, 413, 415, 503),
      400: malformedMatch,
      412: 'The stream is no longer at the expected owner or epoch: nothing moved; the problem names `owner` and `epoch`',
      ...keyed,
    },
  }),
  admin({
    method: 'get',
    path: '/v1/admin/transfers',
    summary: 'The pending transfers, oldest first',
    operationId: 'listTransfers',
    description: `${PAGING} The cursor is \`<since>:<stream>\` of the last transfer of the previous page.`,
    params: { query: transferPageQuery },
    responses: { 200: ok('One page of pending transfers, and how many there are', transferPageSchema, ex.transfers), ...problems(400, 503) },
  }),
  admin({
    method: 'get',
    path: '/v1/admin/transfers/{stream}',
    summary: "A stream's transfer: pending, or settled with the owner and epoch",
    operationId: 'getTransfer',
    params: { path: streamParam },
    responses: {
      200: { ...ok('Pending or settled', transferStatusSchema, ex.transferStatus), headers: versionTag('"<epoch>" of the stream') },
      ...problems(400, 404, 503),
    },
  }),
  admin({
    method: 'post',
    path: '/v1/admin/rebalance',
    summary: 'Plan (dryRun) or start moves that even out streams per node',
    operationId: 'rebalance',
    description: 'The answer carries the size of the plan (`planned`) and its first moves (`truncated` when there are more); the rest of the waiting queue is read from GET /v1/admin/rebalance.',
    params: { headers: [KEY_HEADER] },
    requestBody: rebalanceBody.unwrap(),
    requestBodyOptional: true,
    requestExample: ex.rebalance,
    responses: {
      200: ok('The plan, nothing moved (dryRun, never keyed)', rebalancePlanSchema, ex.plan),
      202: keyedAnswer('Started; the plan and progress in the body', rebalanceStartedSchema, ex.started),
      ...problems(400, 409, 413, 415, 503),
      ...keyed,
    },
  }),
  admin({
    method: 'get',
    path: '/v1/admin/rebalance',
    summary: 'Progress of the current rebalance',
    operationId: 'getRebalance',
    description: `Tallies and one page of the moves not started yet, in plan order. ${PAGING}`,
    params: { query: rebalancePageQuery },
    responses: { 200: ok('Rebalance progress', rebalancePageSchema, ex.progress), ...problems(400, 503) },
  }),
  admin({
    method: 'get',
    path: '/v1/admin/audit',
    summary: "The audit trail, newest first, from the answering member's audit store",
    operationId: 'listAudit',
    description:
      'One record per ownership change the state machine decided: kind, subject, from, to, epoch before and after, actor, reason, cause, commit term and index, time, and the hash chain (prev_hash, hash). ' +
      `Filters: subject (a stream, a node or "cluster"; unknown: 400) and kind (unknown: 400). At most \`limit\` records (default ${DEFAULT_AUDIT_PAGE}, at most ${MAX_AUDIT_PAGE}); ` +
      `\`next\` is the \`before\` of the next page, null once the trail is read to its start; a filtered page reads at most ${AUDIT_SCAN_BUDGET} records, so it may be short and still have a \`next\`. A page past the end is empty.`,
    params: { query: auditPageQuery },
    responses: { 200: ok('One page of the trail, newest first', streamAuditPageSchema, streamAuditExamples.page), ...problems(400, 503) },
  }),
  admin({
    method: 'get',
    path: '/v1/admin/audit/chain',
    summary: "The trail's chain head and anchors, as the replicated state keeps them",
    operationId: 'getAuditChain',
    responses: { 200: ok("The trail's head and anchors", streamAuditChainSchema, streamAuditExamples.chain), ...problems(503) },
  }),
  admin({
    method: 'get',
    path: '/v1/admin/audit/{id}',
    summary: 'One audit record by id (<commit_index>-<seq>)',
    operationId: 'getAuditRecord',
    params: { path: auditIdParam },
    responses: { 200: ok('The record', streamAuditRecordSchema, streamAuditExamples.record), ...problems(400, 503), 404: 'No record with this id in the answering member\'s audit store' },
  }),
];

/** The OpenAPI 3.1 document of a stream node's data and admin API. */
export function streamApiDocument(): ApiDocument {
  const document = new ApiDocument({
    title: 'Baton stream node',
    version: '1',
    description: 'Streams owned by nodes, handed off between them without losing or repeating a record.',
    tags: {
      data: 'Appending to and reading streams, on any node (appends on the owner)',
      admin: 'Nodes, streams, transfers, drain, rebalance and failover (admin scope)',
      cluster: 'The picture of the cluster the CLI and the dashboard read',
      health: 'Probes for load balancers and orchestrators',
      dashboard: 'The web dashboard',
      operations: 'Metrics and this document',
      internal: 'Member-to-member traffic (Raft); not for clients',
    },
  });
  document.problemExtensions(streamProblemExtensions);
  for (const spec of [...streamOps, ...adminOps, ...planOps]) document.operation(spec);
  return document;
}
