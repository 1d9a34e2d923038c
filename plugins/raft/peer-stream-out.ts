import {
  Agent as HttpAgent,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Clock, Timer } from '@baton/contracts';

export interface OutboundStreamOptions {
  /** The receiver's stream route, e.g. "http://10.0.0.2:8080/internal/raft/v1/stream". */
  url: string;
  /** Sent when the stream opens (who we are, the cluster, the secret). */
  headers: Record<string, string>;
  clock: Clock;
  /** Frames waiting (unwritten, or written but not yet taken by the socket) before new ones are dropped. */
  maxPendingFrames: number;
  /** Bytes written but not yet taken by the socket before new frames are dropped. */
  maxBufferedBytes: number;
  /**
   * A stream is ended and replaced after this long: HTTP servers cut a request that lasts too
   * long (Node's default requestTimeout is 300 s).
   */
  maxAgeMs: number;
  /** After a failure, frames are dropped for this long instead of reconnecting on every send. */
  retryMs: number;
  /**
   * How long a replaced stream may wait for the receiver's answer before it is cut: frames sent
   * meanwhile wait for it, so a receiver that never answers must not hold them for ever.
   */
  drainTimeoutMs: number;
  /** Called once per failed stream (refused, connection lost, peer down). */
  onFailure(error: Error): void;
}

/** Why `push` did not take a frame. */
export type PushRefusal = 'full' | 'unreachable' | 'closed';

/**
 * One long-lived POST to one peer whose body is a sequence of newline-terminated JSON frames,
 * written as soon as they are pushed (frames pushed in the same turn of the event loop go out
 * in one write, so one Ready becomes one TCP segment). A single stream keeps the frames in
 * order and costs no request, routing or response per message, unlike a POST per batch,
 * where an append waits behind the heartbeat POST in flight.
 *
 * Best effort, like every PeerTransport send: frames in a stream that breaks are lost (Raft
 * retransmits), and for `retryMs` after a failure new frames are refused rather than opening a
 * connection per message to a peer that is down. A stream older than `maxAgeMs` is ended and
 * its successor opens only once the receiver has answered the old one, so no frame overtakes
 * an earlier one across the switch.
 */
export class OutboundPeerStream {
  private readonly target: URL;
  private readonly agent: HttpAgent;
  private current: ClientRequest | undefined;
  private openedAt = 0;
  /** The stream being replaced: ended by us, waiting for the receiver's answer. */
  private draining: ClientRequest | undefined;
  private drainTimer: Timer | undefined;
  private pending: string[] = [];
  private scheduled = false;
  private retryAt = 0;
  private closed = false;
  /** Resolves once every stream open at `close` was answered or broke. */
  private closing: Promise<void> = Promise.resolve();
  private resolveClosing: () => void = () => {};
  private unanswered = 0;

  constructor(private readonly options: OutboundStreamOptions) {
    this.target = new URL(options.url);
    const secure = this.target.protocol === 'https:';
    // One socket per stream, kept alive so a rotated stream reuses the connection.
    this.agent = secure
      ? new HttpsAgent({ keepAlive: true, maxSockets: 2 })
      : new HttpAgent({ keepAlive: true, maxSockets: 2 });
  }

  /** Queues one frame (JSON without a newline) for sending; returns why not when it is dropped. */
  push(frame: string): PushRefusal | undefined {
    if (this.closed) return 'closed';
    if (
      this.current === undefined &&
      this.draining === undefined &&
      this.options.clock.now() < this.retryAt
    )
      return 'unreachable';
    if (this.pending.length >= this.options.maxPendingFrames) return 'full';
    if (this.current && this.current.writableLength > this.options.maxBufferedBytes) return 'full';
    this.pending.push(frame);
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => this.flush());
    }
    return undefined;
  }

  /**
   * Drops everything not yet written, as a crash would, and ends the stream cleanly (the
   * receiver sees the end rather than a broken request); resolves once the receiver answered
   * (or the connection broke), and its connection goes then.
   */
  close(): Promise<void> {
    if (this.closed) return this.closing;
    this.closed = true;
    this.pending = [];
    const open = [this.current, this.draining].filter((r) => r !== undefined);
    this.current = this.draining = undefined;
    this.drainTimer?.cancel();
    if (open.length === 0) {
      this.agent.destroy();
      return this.closing;
    }
    this.closing = new Promise<void>((resolve) => (this.resolveClosing = resolve));
    this.unanswered = open.length;
    for (const req of open) {
      req.end();
      // Never hold the process open for a peer that does not answer.
      req.socket?.unref();
    }
    return this.closing;
  }

  private flush(): void {
    this.scheduled = false;
    if (this.closed || this.pending.length === 0) return;
    if (this.current && this.options.clock.now() - this.openedAt >= this.options.maxAgeMs) {
      const old = this.current;
      this.draining = old;
      this.current = undefined;
      old.end();
      this.drainTimer = this.options.clock.setTimer(this.options.drainTimeoutMs, () => {
        if (this.draining === old)
          old.destroy(
            new Error(`no answer to the end of a stream within ${this.options.drainTimeoutMs} ms`),
          );
      });
    }
    if (this.draining) return; // resumes when the receiver answers the old stream
    const req = this.current ?? this.open();
    req.write(`${this.pending.join('\n')}\n`);
    this.pending = [];
  }

  private open(): ClientRequest {
    const secure = this.target.protocol === 'https:';
    const req = (secure ? httpsRequest : httpRequest)(this.target, {
      method: 'POST',
      agent: this.agent,
      headers: { ...this.options.headers, 'content-type': 'application/x-ndjson' },
    });
    this.current = req;
    this.openedAt = this.options.clock.now();
    let done = false;
    const finish = (error: Error | undefined) => {
      if (done) return;
      done = true;
      if (this.closed) {
        req.destroy();
        if (--this.unanswered <= 0) {
          this.agent.destroy();
          this.resolveClosing();
        }
      } else if (this.current === req) {
        // The receiver ended a stream we were still writing (it stops, or refused us).
        this.current = undefined;
        req.destroy();
        this.retryAt = this.options.clock.now() + this.options.retryMs;
        this.options.onFailure(error ?? new Error('the peer closed the stream'));
      } else if (this.draining === req) {
        this.draining = undefined;
        this.drainTimer?.cancel();
        if (error) this.options.onFailure(error);
        if (this.pending.length > 0 && !this.scheduled) {
          this.scheduled = true;
          queueMicrotask(() => this.flush());
        }
      }
    };
    req.on('socket', (socket) => socket.setNoDelay(true));
    req.on('response', (res: IncomingMessage) => {
      res.resume();
      const status = res.statusCode ?? 0;
      finish(status >= 200 && status < 300 ? undefined : new Error(`HTTP ${status}`));
    });
    req.on('error', (error) => finish(error));
    req.on('close', () => finish(new Error('connection closed without an answer')));
    // Send the headers now: the receiver accepts or refuses the stream before the first frame.
    req.flushHeaders();
    return req;
  }
}
