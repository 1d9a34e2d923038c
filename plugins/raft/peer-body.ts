import type { Context } from 'koa';
import type { Clock } from '@baton/contracts';
import { HttpProblem } from '@baton/http';

// Reading a peer route's body within its bound and its deadline, and the answers to a body
// refused for either.

/**
 * The slowest rate an honest peer is assumed to send a body at: a busy link between regions,
 * far below what one TCP connection carries in a data centre. A body deadline is how long a
 * sender that stalls can hold its slot (and the bytes it sent): long enough for a whole body of
 * the route's bound at this rate, and no longer, so an honest message arrives and a stalled one
 * is cut soon.
 */
const SLOW_HONEST_BYTES_PER_SECOND = 2 * 1024 * 1024;
/** Whatever the size: connection setup, a GC pause or a busy event loop on either side. */
const MIN_BODY_DEADLINE_MS = 5_000;

/**
 * The default body deadline of a route whose bodies are at most `maxBytes`: a body of that size
 * at a slow but honest rate, never below the floor. largeMessageDeadlineMs is this of
 * maxLargeMessageBytes (32 s for 64 MiB); requestDeadlineMs of maxMessageBytes, where the floor
 * rules (4 MiB takes 2 s at this rate): a forwarded proposal is rarely more than a few KiB, and
 * its sender gives up on it soon after its propose timeout (5 s by default) anyway, so a stalled
 * body holds one of the request slots for 5 s at most instead of until Node's request timeout.
 *
 * @internal
 */
export function defaultBodyDeadlineMs(maxBytes: number): number {
  return Math.max(MIN_BODY_DEADLINE_MS, Math.ceil((maxBytes / SLOW_HONEST_BYTES_PER_SECOND) * 1000));
}

/** 408, and the connection closed: the rest of the body may still be on its way. */
export function bodyTimedOut(deadlineMs: number, option: string): HttpProblem {
  return new HttpProblem({
    status: 408,
    type: 'body-timeout',
    detail: `the body did not arrive whole within ${deadlineMs} ms: send it again, or raise ${option} on the receiver if the link is this slow`,
    extra: { deadline_ms: deadlineMs },
    headers: { Connection: 'close' },
  });
}

export function tooLarge(limit: number, what: string): HttpProblem {
  return new HttpProblem({
    status: 413,
    type: 'body-too-large',
    detail: `${what} is over the limit of ${limit} bytes`,
    extra: { limit_bytes: limit },
    headers: { Connection: 'close' },
  });
}

/** A body this member will not read on: it is over its bound, or late. */
export class BodyRefused extends Error {
  constructor(
    readonly reason: 'too_large' | 'deadline',
    readonly deadlineMs = 0,
  ) {
    super(reason === 'too_large' ? 'body over its bound' : `body not whole within ${deadlineMs} ms`);
  }
}

/**
 * The request body as text, refusing more than `limit` bytes, and a body not whole within the
 * deadline (timed on the injected clock). A refused body is left unread rather than destroyed,
 * so the refusal can still be answered; it says `Connection: close`, and Node closes the
 * connection once that answer is written.
 */
export function readBody(ctx: Context, limit: number, deadline: { clock: Clock; ms: number }): Promise<string> {
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limit) return Promise.reject(new BodyRefused('too_large'));
  const req = ctx.req;
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) finish(new BodyRefused('too_large'));
      else chunks.push(chunk);
    };
    const onEnd = () => finish();
    const onError = (error: Error) => finish(error);
    const onClose = () => finish(new Error('the connection closed before the body was whole'));
    const timer = deadline.clock.setTimer(deadline.ms, () => finish(new BodyRefused('deadline', deadline.ms)));
    let done = false;
    function finish(error?: Error): void {
      if (done) return;
      done = true;
      timer.cancel();
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      if (error === undefined) {
        resolve(Buffer.concat(chunks).toString('utf8'));
        return;
      }
      req.pause();
      reject(error);
    }
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}
