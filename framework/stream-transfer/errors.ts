import { BatonError } from '@baton/contracts';
import type { CurrentVersion, RejectReason } from './commands.js';
import type { NodeId, StreamId } from './model.js';

/** The stream is not in the metadata. */
export class StreamNotFoundError extends BatonError {
  constructor(readonly stream: StreamId) {
    super('stream_not_found', `stream ${stream} does not exist: create it with POST /v1/admin/streams`);
  }
}

/**
 * The request reached a node that does not serve the stream. Names the owner (or the
 * owner-to-be while a transfer is pending), its address and the epoch it will serve, so the
 * client retries there without a lookup.
 */
export class NotOwnerError extends BatonError {
  constructor(
    readonly stream: StreamId,
    readonly owner: NodeId,
    readonly address: string | undefined,
    readonly epoch: number,
    readonly transferring: boolean,
  ) {
    super(
      'not_owner',
      transferring
        ? `stream ${stream} is moving to node ${owner} (epoch ${epoch}): send the request to ${address ?? owner}`
        : `stream ${stream} is owned by node ${owner} (epoch ${epoch}): send the request to ${address ?? owner}`,
    );
  }
}

/** The stream did not become writable here within the parking deadline (seed: "up to 10 seconds"). */
export class HandoffTimeoutError extends BatonError {
  constructor(
    readonly stream: StreamId,
    readonly waitedMs: number,
    readonly retryAfterSeconds: number,
  ) {
    super('handoff_timeout', `stream ${stream} did not settle within ${waitedMs} ms: retry in ${retryAfterSeconds} s`);
  }
}

/** A producer sent a sequence number below the last one this stream accepted from it. */
export class StaleProducerSequenceError extends BatonError {
  constructor(
    readonly stream: StreamId,
    readonly producer: string,
    readonly seq: number,
    readonly lastSeq: number,
  ) {
    super(
      'stale_producer_sequence',
      `producer ${producer} sent seq ${seq} to stream ${stream}, but seq ${lastSeq} was already appended: sequence numbers must grow`,
    );
  }
}

/** A principal wrote under a producer id another principal holds on this stream. */
export class ProducerHeldError extends BatonError {
  constructor(
    readonly stream: StreamId,
    readonly producer: string,
    readonly principal: string,
  ) {
    super(
      'producer_held',
      `producer ${producer} on stream ${stream} belongs to another principal, so ${principal} may not write under it: choose a producer id of your own`,
    );
  }
}

/** The node cannot accept this append right now (buffer full, stopping, WAL down). */
export class AppendUnavailableError extends BatonError {
  constructor(
    readonly stream: StreamId,
    reason: string,
  ) {
    super('append_unavailable', `stream ${stream} cannot take appends right now: ${reason}; retry shortly`);
  }
}

/**
 * The object store refused this node's write because another node took the stream over (a
 * failover fenced it). The append was not acknowledged; the node's metadata view is behind, so
 * it cannot name the new owner: ask any other node, which answers with a hint.
 */
export class StreamFencedError extends BatonError {
  constructor(
    readonly stream: StreamId,
    readonly node: NodeId,
  ) {
    super(
      'stream_fenced',
      `node ${node} lost stream ${stream} to a takeover: the append was not acknowledged; retry on another node, which knows the new owner`,
    );
  }
}

/** An admin command the metadata refused, with the state machine's reason. */
export class CommandRejectedError extends BatonError {
  constructor(
    readonly reason: RejectReason,
    message: string,
    /** What holds now, when a precondition failed. */
    readonly current?: CurrentVersion,
    /** The streams a placement refusal is about. */
    readonly streams?: readonly string[],
  ) {
    super(`rejected.${reason}`, message);
  }
}
