import { setImmediate as nextTurn } from 'node:timers';
import type { Context, Middleware } from 'koa';
import type { Clock } from '@baton/contracts';
import { HttpProblem } from './problem.js';

/** 16 MiB of request bodies buffered at once per listener: 16 appends of the largest size. */
export const DEFAULT_BODY_BYTES_IN_FLIGHT = 16 * 1024 * 1024;
/**
 * A body must have arrived whole this long after its handler began to read it: a 1 MiB body
 * at 40 KB/s, far slower than any honest client, and a tenth of Node's default request
 * timeout, which a slow-body client would otherwise hold its buffer and slot for.
 */
export const DEFAULT_BODY_DEADLINE_MS = 30_000;

/** Bodies this large are decoded and parsed one per turn of the event loop (see `parseTurn`). */
export const LARGE_BODY_BYTES = 64 * 1024;

export interface BodyAdmissionOptions {
  clock: Clock;
  bytesInFlight?: number;
  deadlineMs?: number;
  /** Told of every request refused because the budget was spent. */
  onRefusal?: () => void;
}

/** What one listener's body reader admits against: one budget shared by all its requests. */
export class BodyAdmission {
  private reserved = 0;
  readonly limitBytes: number;
  readonly deadlineMs: number;

  constructor(private readonly options: BodyAdmissionOptions) {
    this.limitBytes = options.bytesInFlight ?? DEFAULT_BODY_BYTES_IN_FLIGHT;
    this.deadlineMs = options.deadlineMs ?? DEFAULT_BODY_DEADLINE_MS;
  }

  get clock(): Clock {
    return this.options.clock;
  }

  private readonly parseQueue: (() => void)[] = [];
  private handing = false;

  /** Bytes reserved by bodies being read now. */
  get inFlight(): number {
    return this.reserved;
  }

  /**
   * Reserves `bytes` (a body's declared length, or its route's bound when it is chunked) for
   * the read, or refuses with 503 and Retry-After before a byte of it is buffered. The
   * returned function releases the reservation; calling it twice releases once.
   */
  reserve(bytes: number): () => void {
    if (this.reserved > 0 && this.reserved + bytes > this.limitBytes) {
      this.options.onRefusal?.();
      throw new HttpProblem({
        status: 503,
        type: 'server-busy',
        detail: `this listener is reading ${this.limitBytes} bytes of request bodies already: retry shortly`,
        // The body is never read: the connection cannot carry another request.
        headers: { 'Retry-After': '1', Connection: 'close' },
      });
    }
    this.reserved += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.reserved -= bytes;
    };
  }

  /**
   * Resolves when a large body may be decoded and parsed: one per turn of the event loop, in
   * arrival order. Decoding, checking and parsing a mebibyte of JSON takes a few milliseconds
   * of the event loop, and a flood makes dozens of bodies complete in one poll phase; parsed
   * back to back they held the loop for a third of a second, toward a Raft election timeout. One
   * per turn lets the timers (heartbeats, lease renewals) run between them.
   */
  parseTurn(): Promise<void> {
    return new Promise((resolve) => {
      this.parseQueue.push(resolve);
      if (!this.handing) this.handNext();
    });
  }

  private handNext(): void {
    this.handing = true;
    // An immediate queued from an immediate runs in the next turn, after that turn's timers.
    nextTurn(() => {
      this.parseQueue.shift()?.();
      if (this.parseQueue.length > 0) this.handNext();
      else this.handing = false;
    });
  }
}

const admissions = new WeakMap<Context, BodyAdmission>();

/** Makes `admission` the one the body reader uses for this app's requests. */
export function bodyAdmission(admission: BodyAdmission): Middleware {
  return async (ctx, next) => {
    admissions.set(ctx, admission);
    await next();
  };
}

/** The request's body admission, when its app mounted one. */
export function bodyAdmissionOf(ctx: Context): BodyAdmission | undefined {
  return admissions.get(ctx);
}
