import { z } from 'zod';
import { decimalQuery } from '@baton/http';
import { ID_PATTERN, type PendingTransfer, type StreamMetadata } from './model.js';
import { allNodeStatus, type NodeStatus, type RenewalAge } from './progress.js';

/** A page holds this many items when the caller does not say, and never more than the maximum. */
export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 1_000;

/** `?after=` is the last id of the previous page; an empty one means "from the start". */
const cursor = z.preprocess(
  (value) => (value === '' ? undefined : value),
  z
    .string()
    .regex(ID_PATTERN, 'after must be the last id of the previous page (1-128 letters, digits, ".", "_" or "-")')
    .optional(),
);

export const pageLimit = decimalQuery('limit', (n) =>
  n
    .int('limit must be an integer')
    .min(1, 'limit must be >= 1')
    .max(MAX_PAGE_LIMIT, `limit must be <= ${MAX_PAGE_LIMIT}`),
).default(DEFAULT_PAGE_LIMIT);

export const pageQuery = z.object({ after: cursor, limit: pageLimit }).strict();

/** Transfers are listed oldest first, so their cursor is the position of the last one: `<since>:<stream>`. */
export const transferPageQuery = z
  .object({
    after: z.preprocess(
      (value) => (value === '' ? undefined : value),
      z
        .string()
        .regex(/^\d{1,15}:[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'after must be the next cursor of the previous page')
        .optional(),
    ),
    limit: pageLimit,
  })
  .strict();

export interface Page<T> {
  items: T[];
  /** The cursor of the next page, or null when this one is the last. */
  next: string | null;
}

/** Takes one more than asked, to know without counting whether another page follows. */
function page<T>(source: Iterable<T>, size: number, cursorOf: (item: T) => string): Page<T> {
  const items: T[] = [];
  for (const item of source) {
    if (items.length === size) return { items, next: cursorOf(items[items.length - 1]) };
    items.push(item);
  }
  return { items, next: null };
}

/** One stream as a listing shows it (no producer marks: those can be many). */
export interface StreamSummary {
  stream: string;
  owner: string;
  epoch: number;
  state: 'open' | 'closed';
  tail: number;
  transfer: Pick<PendingTransfer, 'source' | 'target' | 'reason'> | null;
}

/** Streams by id after the cursor: O(log n + limit). */
export function streamPage(state: StreamMetadata, after: string | undefined, size: number): Page<StreamSummary> {
  const summaries = (function* () {
    for (const record of state.streams(after)) {
      const pending = state.transfer(record.id);
      yield {
        stream: record.id,
        owner: record.owner,
        epoch: record.epoch,
        state: record.state,
        tail: record.tail,
        transfer: pending ? { source: pending.source, target: pending.target, reason: pending.reason } : null,
      };
    }
  })();
  return page(summaries, size, (s) => s.stream);
}

export function nodePage(state: StreamMetadata, after: string | undefined, size: number, renewalAge?: RenewalAge): Page<NodeStatus> {
  return page(allNodeStatus(state, after, renewalAge), size, (n) => n.id);
}

export function transferPage(state: StreamMetadata, after: string | undefined, size: number): Page<PendingTransfer> {
  let from: { since: number; stream: string } | undefined;
  if (after !== undefined) {
    const split = after.indexOf(':');
    from = { since: Number(after.slice(0, split)), stream: after.slice(split + 1) };
  }
  return page(state.transfersBySince(from), size, (t) => `${t.since}:${t.stream}`);
}
