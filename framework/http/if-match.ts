import type { Context } from 'koa';
import { HttpProblem } from './problem.js';

export const IF_MATCH_HEADER = 'If-Match';
export const ETAG_HEADER = 'ETag';

/** The largest version an entity tag may name: anything longer is not a version of ours. */
const VERSION_DIGITS = 15;
const VERSION_TAG = new RegExp(`^"(0|[1-9][0-9]{0,${VERSION_DIGITS - 1}})"$`);

/**
 * The version an `If-Match` precondition names, for resources whose entity tag is a counter (a
 * stream's or an authority's epoch: `ETag: "7"`). Undefined when the header is absent or is `*`
 * (any current representation: the route's own 404 covers a missing one). Anything else but
 * one strong tag of decimal digits is a 400, never a silent "no precondition": a caller who
 * meant to guard a move must learn that the guard was not understood.
 */
export function ifMatchVersion(ctx: Context): number | undefined {
  const values = ctx.req.headersDistinct['if-match'];
  if (values === undefined) return undefined;
  if (values.length > 1) throw badPrecondition(`send one ${IF_MATCH_HEADER} header, not ${values.length}`);
  const header = values[0].trim();
  if (header === '*') return undefined;
  const match = VERSION_TAG.exec(header);
  if (!match) {
    throw badPrecondition(
      `the ${IF_MATCH_HEADER} ${JSON.stringify(header.slice(0, 64))} is not one strong entity tag of this resource: ` +
        `send the ETag a GET answered, quoted, e.g. If-Match: "7"`,
    );
  }
  return Number(match[1]);
}

/** Sets `ETag: "<version>"`, the tag `ifMatchVersion` reads back. */
export function setVersionTag(ctx: Context, version: number): void {
  ctx.set(ETAG_HEADER, `"${version}"`);
}

/**
 * The one version a request expects: from `If-Match` or from a body field, which must agree
 * when both are given (two different guards on one request are a mistake, answered 400).
 */
export function expectedVersion(ctx: Context, fromBody: number | undefined, field: string): number | undefined {
  const fromHeader = ifMatchVersion(ctx);
  if (fromHeader !== undefined && fromBody !== undefined && fromHeader !== fromBody) {
    throw badPrecondition(`${IF_MATCH_HEADER} names "${fromHeader}" but ${field} is ${fromBody}: send one of them, or the same version in both`);
  }
  return fromHeader ?? fromBody;
}

function badPrecondition(detail: string): HttpProblem {
  return new HttpProblem({ status: 400, type: 'invalid-precondition', detail });
}
