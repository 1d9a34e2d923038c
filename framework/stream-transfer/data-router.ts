import Router from '@koa/router';
import { z } from 'zod';
import { decimalQuery, EventStreams, readValidBody, setVersionTag, validate } from '@baton/http';
import { ID_PATTERN } from './model.js';
import { authorizeStream, CLOSED_DATA_PLANE, requireDataCaller, type DataPlaneOptions } from './data-access.js';
import { FollowReads, MAX_READ_WAIT_SECONDS } from './follow-read.js';
import { OwnershipFeed } from './ownership-feed.js';
import { producerKey } from './producer-marks.js';
import type { StreamNode } from './stream-node.js';

/** Largest append request body as sent (JSON included): 1 MiB, as the README states; 413 beyond. */
export const APPEND_BODY_LIMIT_BYTES = 1024 * 1024;
export const MAX_RECORDS_PER_APPEND = 1_000;
export const MAX_READ_LIMIT = 1_000;

const idSchema = (what: string) =>
  z.string().regex(ID_PATTERN, `${what} must be 1-128 characters of letters, digits, '.', '_' or '-', starting with a letter or digit`);

export const streamParam = z.object({ stream: idSchema('a stream id') });

export const appendBody = z
  .object({
    records: z
      .array(z.object({ body: z.string({ error: 'body must be a string' }) }).strict())
      .min(1, 'send at least one record')
      .max(MAX_RECORDS_PER_APPEND, `send at most ${MAX_RECORDS_PER_APPEND} records per request`),
    producer: z
      .object({
        id: idSchema('a producer id'),
        seq: z.number().int('seq must be an integer').nonnegative('seq must be >= 0'),
      })
      .strict()
      .optional(),
  })
  .strict();

export const readQuery = z
  .object({
    from: decimalQuery('from', (n) => n.int('from must be an integer offset').min(0, 'from must be >= 0')).default(0),
    limit: decimalQuery('limit', (n) =>
      n
        .int('limit must be an integer')
        .min(1, 'limit must be >= 1')
        .max(MAX_READ_LIMIT, `limit must be <= ${MAX_READ_LIMIT}`),
    ).default(100),
    wait: decimalQuery('wait', (n) =>
      n
        .int('wait must be a whole number of seconds')
        .min(0, 'wait must be >= 0')
        .max(MAX_READ_WAIT_SECONDS, `wait must be <= ${MAX_READ_WAIT_SECONDS}`),
    )
      .default(0)
      .describe('Seconds to wait for a first record when there is none at `from` yet (long poll; 0 answers at once)'),
  })
  // A misspelt parameter (`offset` for `from`) would otherwise read from 0 without a word.
  .strict();

/**
 * The data API, served by every node (seed 000). Appends are served by the owner, parked on
 * the owner-to-be, and refused elsewhere with a 409 naming where to go; reads come from the
 * object store, so any node answers them. Every route needs a bearer token with the scope of
 * its action (data-access.ts) unless `access` opens it to anonymous callers; the caller is
 * known before its path is checked or its body read, so a stranger's bytes are never buffered.
 */
export function createDataRouter(
  node: StreamNode,
  access: DataPlaneOptions = CLOSED_DATA_PLANE,
  watchers: EventStreams = new EventStreams(node.clock),
): Router {
  const router = new Router({ prefix: '/v1/streams' });
  const follow = new FollowReads(node);
  const ownership = new OwnershipFeed(node, watchers);

  router.post('/:stream/records', async (ctx) => {
    requireDataCaller(ctx, access, 'append');
    const { stream } = validate(streamParam, ctx.params, 'path');
    const principal = authorizeStream(ctx, access, 'append', stream);
    const body = await readValidBody(ctx, appendBody, { limitBytes: APPEND_BODY_LIMIT_BYTES });
    const result = await node.append(
      stream,
      body.records.map((r) => r.body),
      // A producer id is the caller's own: scoped by its principal (producer-marks.ts).
      body.producer && { id: producerKey(body.producer.id, principal), seq: body.producer.seq },
    );
    ctx.body = {
      stream,
      epoch: result.epoch,
      first: result.first,
      count: result.count,
      offsets: Array.from({ length: result.count }, (_, i) => result.first + i),
      duplicate: result.duplicate,
      node: node.self,
    };
  });

  router.get('/:stream/records', async (ctx) => {
    requireDataCaller(ctx, access, 'read');
    const { stream } = validate(streamParam, ctx.params, 'path');
    authorizeStream(ctx, access, 'read', stream);
    const { from, limit, wait } = validate(readQuery, ctx.query, 'query');
    // A follower that hangs up ends its wait.
    const gone = new AbortController();
    ctx.res.once('close', () => gone.abort());
    const records = await follow.read(stream, from, limit, wait * 1000, gone.signal);
    const next = records.length > 0 ? records[records.length - 1].offset + 1 : from;
    ctx.body = { stream, from, records, next };
  });

  // The ownership as JSON, or with Accept: text/event-stream a feed of it (ownership-feed.ts).
  router.get('/:stream/ownership', async (ctx) => {
    requireDataCaller(ctx, access, 'read');
    const { stream } = validate(streamParam, ctx.params, 'path');
    authorizeStream(ctx, access, 'read', stream);
    if (ctx.accepts('application/json', 'text/event-stream') === 'text/event-stream') {
      await ownership.watch(ctx, stream);
      return;
    }
    const current = await ownership.current(stream);
    setVersionTag(ctx, current.epoch);
    ctx.body = current;
  });

  router.get('/:stream', async (ctx) => {
    requireDataCaller(ctx, access, 'read');
    const { stream } = validate(streamParam, ctx.params, 'path');
    authorizeStream(ctx, access, 'read', stream);
    const described = await node.describe(stream);
    // The version a transfer of this stream may be guarded with (If-Match on POST /v1/admin/transfers).
    setVersionTag(ctx, described.epoch);
    ctx.body = described;
  });

  return router;
}
