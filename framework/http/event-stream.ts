import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import { z } from 'zod';
import type { Clock, Timer } from '@baton/contracts';
import { releaseConnection } from './connection-admission.js';
import { HttpProblem, retryAfter } from './problem.js';

/** When a client refused for a full listener is asked to try again. */
const WATCHERS_FULL_RETRY_SECONDS = 5;

/**
 * Bounds of one listener's server-sent event streams. Watchers are long-lived and idle, so
 * they are counted here and not against the connection admission's listener cap (which is
 * sized for requests that end): a node can hold many watchers and still admit its own clients.
 */
export const eventStreamLimitsSchema = z
  .object({
    /** Streams open at once on this listener; one more answers 503. */
    maxWatchers: z.number().int().min(1).max(100_000).default(10_000),
    /** A comment line is sent this often, so proxies and clients see the stream is alive. */
    heartbeatMs: z.number().int().min(100).max(3_600_000).default(15_000),
    /** A watcher that has more than this many bytes not yet taken by its socket is dropped. */
    maxQueuedBytes: z.number().int().min(1_024).max(16 * 1024 * 1024).default(64 * 1024),
  })
  .strict();

export type EventStreamLimits = z.output<typeof eventStreamLimitsSchema>;

export const DEFAULT_EVENT_STREAM_LIMITS: EventStreamLimits = eventStreamLimitsSchema.parse({});

/** Responses that stay open until the client leaves: a stopping listener ends them instead of waiting. */
const longLived = new WeakSet<ServerResponse>();

/** Whether a response is an event stream (the listener ends those at once when it stops). */
export function isLongLivedResponse(res: ServerResponse): boolean {
  return longLived.has(res);
}

/** Why a watcher's stream ended, as counted. */
export type EventStreamEnd = 'client_left' | 'slow_reader' | 'closed';

/** One open `text/event-stream` answer. */
export class EventStream {
  private ended = false;
  private readonly closeListeners: ((why: EventStreamEnd) => void)[] = [];

  constructor(
    private readonly res: ServerResponse,
    private readonly maxQueuedBytes: number,
  ) {
    res.once('close', () => this.finish('client_left'));
  }

  get isOpen(): boolean {
    return !this.ended;
  }

  /** Sends one event; a reader that is not keeping up is dropped rather than buffered without bound. */
  send(event: string, data: unknown): void {
    this.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** A comment line: ignored by clients, keeps the connection visibly alive. */
  comment(text: string): void {
    this.write(`: ${text}\n\n`);
  }

  onClose(fn: (why: EventStreamEnd) => void): void {
    if (this.ended) fn('closed');
    else this.closeListeners.push(fn);
  }

  /** Ends the stream from this side. */
  close(): void {
    if (this.ended) return;
    this.finish('closed');
    this.res.end();
  }

  private write(chunk: string): void {
    if (this.ended) return;
    if (this.res.writableLength + chunk.length > this.maxQueuedBytes) {
      this.finish('slow_reader');
      this.res.destroy();
      return;
    }
    this.res.write(chunk);
  }

  private finish(why: EventStreamEnd): void {
    if (this.ended) return;
    this.ended = true;
    for (const fn of this.closeListeners.splice(0)) fn(why);
  }
}

/**
 * The event streams of one listener: admits a watcher (503 past `maxWatchers`), sends the
 * heartbeat to every open stream from one timer (none while no stream is open), and counts
 * why streams ended.
 */
export class EventStreams {
  readonly limits: EventStreamLimits;
  private readonly open = new Set<EventStream>();
  private heartbeat?: Timer;

  constructor(
    private readonly clock: Clock,
    limits: Partial<EventStreamLimits> = {},
    private readonly onEnd?: (why: EventStreamEnd) => void,
  ) {
    this.limits = { ...DEFAULT_EVENT_STREAM_LIMITS, ...limits };
  }

  get watchers(): number {
    return this.open.size;
  }

  /**
   * Answers the request with an event stream. Call it after the request is authorized and
   * validated: from here on koa no longer answers, this stream does.
   */
  accept(ctx: Context): EventStream {
    if (this.open.size >= this.limits.maxWatchers) {
      throw new HttpProblem({
        status: 503,
        type: 'watchers-full',
        title: 'Too many watchers',
        detail: `this node holds ${this.limits.maxWatchers} event streams already: watch again later or at another node`,
        headers: retryAfter(WATCHERS_FULL_RETRY_SECONDS),
      });
    }
    const res = ctx.res;
    longLived.add(res);
    ctx.respond = false;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      // The stream is the connection's last answer: once it ends, so does the connection, which
      // no longer counts against the listener's caps (below).
      connection: 'close',
    });
    // The connection is a watcher's now: it leaves the listener's connection budget for this one.
    releaseConnection(ctx.req.socket);
    const stream = new EventStream(res, this.limits.maxQueuedBytes);
    this.open.add(stream);
    stream.onClose((why) => {
      this.open.delete(stream);
      this.onEnd?.(why);
      if (this.open.size === 0) this.stopHeartbeat();
    });
    // Reconnect after a second when the connection drops (EventSource's `retry`).
    res.write('retry: 1000\n\n');
    this.startHeartbeat();
    return stream;
  }

  /** Ends every open stream (the listener is stopping). */
  closeAll(): void {
    for (const stream of [...this.open]) stream.close();
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = this.clock.setTimer(this.limits.heartbeatMs, () => {
      this.heartbeat = undefined;
      for (const stream of this.open) stream.comment('heartbeat');
      if (this.open.size > 0) this.startHeartbeat();
    });
  }

  private stopHeartbeat(): void {
    this.heartbeat?.cancel();
    this.heartbeat = undefined;
  }
}
