import type { Context } from 'koa';
import type { Clock } from '@baton/contracts';
import type { z } from 'zod';
import { HttpProblem, problems } from './problem.js';
import { validate } from './validate.js';
import { bodyAdmissionOf, LARGE_BODY_BYTES } from './body-admission.js';
import { DEFAULT_JSON_BOUNDS, jsonBoundsViolation } from './json-bounds.js';

/** 1 MiB: comfortably above any admin request, small enough that a flood cannot exhaust memory. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

export interface JsonBodyOptions {
  /** Largest accepted body in bytes; larger ones answer 413 without being buffered. */
  limitBytes?: number;
  /** When true an empty body reads as `undefined` instead of a 400. */
  optional?: boolean;
}

const parsedBodies = new WeakMap<Context, unknown>();

/**
 * Reads and parses the request's JSON body. A wrong content type answers 415, a body over the
 * limit 413 (refused from Content-Length alone when it is declared, otherwise as soon as the
 * stream crosses the limit), malformed JSON or JSON nested deeper than the bounds 400. Under
 * the app's body admission (body-admission.ts) a body that would overspend the listener's bytes
 * in flight answers 503 before it is read, and one that has not arrived by the deadline 408.
 * Reading twice returns the same value.
 */
export async function readJsonBody(ctx: Context, options: JsonBodyOptions = {}): Promise<unknown> {
  if (parsedBodies.has(ctx)) return parsedBodies.get(ctx);
  const limit = options.limitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const { text, release } = await readBodyText(ctx, limit);
  try {
    const value = parseBody(text, options);
    parsedBodies.set(ctx, value);
    return value;
  } finally {
    // Held until the text is parsed: the bytes, the text and the value all live until then.
    release();
  }
}

function parseBody(text: string, options: JsonBodyOptions): unknown {
  let value: unknown;
  if (text.trim() === '') {
    if (!options.optional) {
      throw problems.badRequest('the request body is empty: send a JSON document with Content-Type: application/json');
    }
    value = undefined;
  } else {
    const violation = jsonBoundsViolation(text, DEFAULT_JSON_BOUNDS);
    if (violation !== undefined) {
      throw new HttpProblem({ status: 400, type: 'json-limits', detail: `the request body is refused before parsing: ${violation}` });
    }
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new HttpProblem({
        status: 400,
        type: 'malformed-json',
        detail: `the request body is not valid JSON: ${(error as Error).message}`,
      });
    }
  }
  return value;
}

/** Reads the JSON body and validates it: the usual first line of a handler that takes input. */
export async function readValidBody<S extends z.ZodType>(
  ctx: Context,
  schema: S,
  options: JsonBodyOptions = {},
): Promise<z.output<S>> {
  return validate(schema, await readJsonBody(ctx, options), 'request body');
}

async function readBodyText(ctx: Context, limit: number): Promise<{ text: string; release: () => void }> {
  const declared = ctx.request.length;
  const hasBody = declared !== undefined ? declared > 0 : ctx.get('Transfer-Encoding') !== '';
  if (!hasBody) return { text: '', release: () => undefined };
  if (!ctx.is('application/json', '+json')) {
    throw new HttpProblem({
      status: 415,
      type: 'unsupported-media-type',
      detail: `expected a JSON body (Content-Type: application/json), got ${JSON.stringify(ctx.get('Content-Type') || 'none')}`,
    });
  }
  const encoding = ctx.get('Content-Encoding').toLowerCase();
  if (encoding !== '' && encoding !== 'identity') {
    throw new HttpProblem({
      status: 415,
      type: 'unsupported-media-type',
      detail: `Content-Encoding ${JSON.stringify(encoding)} is not accepted: send the JSON uncompressed`,
    });
  }
  if (declared !== undefined && declared > limit) throw tooLarge(limit);

  const admission = bodyAdmissionOf(ctx);
  // A chunked body reserves its route's whole bound: it may grow to it.
  const release = admission?.reserve(declared ?? limit) ?? (() => undefined);
  try {
    const bytes = Buffer.concat(await readChunks(ctx, limit, admission?.deadlineMs, admission?.clock));
    // The caller parses right after: a large body waits for its turn first (body-admission.ts).
    if (admission && bytes.length >= LARGE_BODY_BYTES) await admission.parseTurn();
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), release };
  } catch (error) {
    release();
    if (error instanceof HttpProblem) throw error;
    throw new HttpProblem({ status: 400, type: 'malformed-json', detail: 'the request body is not valid UTF-8' });
  }
}

/**
 * The body's bytes, refused with 413 once they cross `limit` and with 408 when they have not
 * all arrived within `deadlineMs` (a slow-body client holds a buffer and a budget share).
 */
function readChunks(ctx: Context, limit: number, deadlineMs?: number, clock?: Clock): Promise<Buffer[]> {
  const req = ctx.req;
  return new Promise<Buffer[]>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const timer =
      deadlineMs !== undefined && clock
        ? clock.setTimer(deadlineMs, () => finish(tooSlow(deadlineMs)))
        : undefined;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) return finish(tooLarge(limit));
      chunks.push(chunk);
    };
    const onEnd = () => finish();
    const onError = (error: Error) => finish(problems.badRequest(`the request body could not be read completely: ${error.message}`));
    const onAborted = () => finish(problems.badRequest('the request body could not be read completely: the client went away'));
    function finish(problem?: HttpProblem): void {
      timer?.cancel();
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      if (problem) {
        // The rest is never read; the answer closes the connection (lingering-close.ts).
        req.pause();
        reject(problem);
      } else resolve(chunks);
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

function tooSlow(deadlineMs: number): HttpProblem {
  return new HttpProblem({
    status: 408,
    type: 'request-timeout',
    detail: `the request body did not arrive within ${deadlineMs} ms: send it again, faster`,
    headers: { Connection: 'close' },
  });
}

/**
 * 413, and the connection is closed after the answer: the rest of an oversized body is never
 * read, so the socket cannot carry another request.
 */
function tooLarge(limit: number): HttpProblem {
  return new HttpProblem({
    status: 413,
    type: 'body-too-large',
    detail: `the request body exceeds the limit of ${limit} bytes: send a smaller request`,
    extra: { limit_bytes: limit },
    headers: { Connection: 'close' },
  });
}
