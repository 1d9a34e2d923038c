import { BatonError } from './errors.js';
import { token } from './token.js';

/** A member of a cluster, as named in its configuration (e.g. "n1", "east-1"). */
export type MemberId = string;

/**
 * One message between members. `channel` keeps subsystems apart on one transport (the Raft
 * plugin uses "raft"); `body` must be JSON-serialisable, because real transports send it over
 * HTTP and receivers validate it before use (a malformed body is dropped, never trusted).
 */
export interface PeerMessage {
  channel: string;
  body: unknown;
}

export interface PeerHandlers {
  /** A one-way message arrived. Must not throw; a handler that does is logged and ignored. */
  onMessage(from: MemberId, message: PeerMessage): void;
  /** A request arrived; the returned message is the response. */
  onRequest?(from: MemberId, message: PeerMessage): Promise<PeerMessage>;
}

export interface RequestOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * How members reach each other. `send` is best effort (it may drop, delay, duplicate or reorder:
 * protocols above it must tolerate all four); `request` waits for one response or fails with
 * PeerUnreachableError. Implementations: the simulated network (framework/testing/sim) and HTTP
 * on each member's public server (plugins/raft).
 */
export interface PeerTransport {
  readonly self: MemberId;
  send(to: MemberId, message: PeerMessage): void;
  request(to: MemberId, message: PeerMessage, options: RequestOptions): Promise<PeerMessage>;
  /** Registers the handlers for one channel; returns the function that removes them. */
  listen(channel: string, handlers: PeerHandlers): () => void;
  /** Optional: where `member` is reached, when the transport addresses peers. */
  addressOf?(member: MemberId): string | undefined;
  /** Optional: learns a new member's address (a voter being added); false when it refuses it. */
  addPeer?(member: MemberId, address: string): boolean;
}

export const PEER_TRANSPORT = token<PeerTransport>('PeerTransport');

/**
 * A request got no answer: the peer is unknown, down, partitioned, or too slow. `notSent` says
 * the request certainly never reached the peer (no connection could be made: nothing listens
 * there, no route to it), so a caller may retry elsewhere without wondering whether it acted.
 */
export class PeerUnreachableError extends BatonError {
  readonly notSent: boolean;

  constructor(
    readonly peer: MemberId,
    reason: string,
    options?: { cause?: unknown; notSent?: boolean },
  ) {
    super('peer_unreachable', `member ${peer} did not answer: ${reason}`, options);
    this.notSent = options?.notSent ?? false;
  }
}
