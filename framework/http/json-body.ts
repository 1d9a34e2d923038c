import type { Context } from 'koa';
import type { z } from 'zod';
import { HttpProblem, problems } from './problem.js';
import { validate } from './validate.js';
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
 * stream crosses the limit), malformed JSON or JSON nested deeper than the bounds 400. Reading twice returns the same value.
 */
export async function readJsonBody(ctx: Context, options: JsonBodyOptions = {}): Promise<unknown> {
  if (parsedBodies.has(ctx)) return parsedBodies.get(ctx);
  const limit = options.limitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const text = await readBodyText(ctx, limit);
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
  parsedBodies.set(ctx, value);
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

async function readBodyText(ctx: Context, limit: number): Promise<string> {
  const declared = ctx.request.length;
  const hasBody = declared !== undefined ? declared > 0 : ctx.get('Transfer-Encoding') !== '';
  if (!hasBody) return '';
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

  const chunks: Buffer[] = [];
  let received = 0;
  try {
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (received > limit) throw tooLarge(limit);
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof HttpProblem) throw error;
    throw problems.badRequest(`the request body could not be read completely: ${(error as Error).message}`);
  }
  const bytes = Buffer.concat(chunks);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new HttpProblem({ status: 400, type: 'malformed-json', detail: 'the request body is not valid UTF-8' });
  }
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
