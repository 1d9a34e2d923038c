import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { Clock } from '../../framework/contracts/clock.js';
import type { Logger } from '../../framework/contracts/logger.js';
import {
  PeerUnreachableError,
  type MemberId,
  type PeerHandlers,
  type PeerMessage,
  type PeerTransport,
  type RequestOptions,
} from '../../framework/contracts/peer-transport.js';
import { token } from '../../framework/contracts/token.js';
import { PeerPoster } from './http-post.js';

export const RAFT_HTTP_BASE = '/internal/raft/v1';

export interface HttpPeerTransportOptions {
  self: MemberId;
  /** Every other member's base URL (scheme, host, port), e.g. "http://10.0.0.2:8080". */
  peers: Record<MemberId, string>;
  /** Requests carrying another cluster id are refused: two clusters on one network never mix. */
  cluster: string;
  /** When set, peers must present it (header x-baton-peer-secret); anything else is refused. */
  secret?: string;
  clock: Clock;
  logger: Logger;
  /** Largest request body accepted (snapshots travel this way). Default 64 MiB. */
  maxBodyBytes?: number;
  /** One-way messages waiting for one peer before new ones are dropped (best effort). */
  maxQueuedPerPeer?: number;
  /** Messages sent in one POST at most. */
  maxBatch?: number;
}

/** What the HTTP side saw: drops by reason, for operators and tests. */
export interface HttpTransportStats {
  sent: number;
  sendFailures: number;
  droppedQueueFull: number;
  received: number;
  rejectedMalformed: number;
  rejectedForeign: number;
  handlerErrors: number;
}

const member = z.string().min(1).max(256);
const peerMessage = z.object({ channel: z.string().min(1).max(64), body: z.unknown() });
const batchSchema = z.object({ cluster: z.string(), from: member, messages: z.array(peerMessage).max(100_000) });
const requestSchema = z.object({ cluster: z.string(), from: member, message: peerMessage });

/** The router a host mounts on its public server (a token of this plugin, not a contract). */
export const RAFT_PEER_ROUTER = token<Router>('RaftPeerRouter');

/**
 * PeerTransport over HTTP: one-way messages are queued per peer and POSTed in batches (one
 * request in flight per peer, so a burst becomes one request), requests are one POST each.
 * Connections are kept alive (fetch's pool). The receiving side is `router()`: bodies are size-
 * limited and validated with zod; a malformed body, an unknown sender or another cluster's
 * traffic is refused and counted, and a throwing handler never takes the member down.
 */
export class HttpPeerTransport implements PeerTransport {
  readonly self: MemberId;
  readonly stats: HttpTransportStats = {
    sent: 0,
    sendFailures: 0,
    droppedQueueFull: 0,
    received: 0,
    rejectedMalformed: 0,
    rejectedForeign: 0,
    handlerErrors: 0,
  };
  private readonly handlers = new Map<string, PeerHandlers>();
  private readonly queues = new Map<MemberId, PeerMessage[]>();
  private readonly flushing = new Set<MemberId>();
  private readonly log: Logger;
  private readonly maxBodyBytes: number;
  private readonly maxQueued: number;
  private readonly maxBatch: number;
  private closed = false;
  private readonly poster = new PeerPoster();

  constructor(private readonly options: HttpPeerTransportOptions) {
    this.self = options.self;
    this.log = options.logger.child({ plugin: 'raft-http', member: options.self });
    this.maxBodyBytes = options.maxBodyBytes ?? 64 * 1024 * 1024;
    this.maxQueued = options.maxQueuedPerPeer ?? 10_000;
    this.maxBatch = options.maxBatch ?? 512;
    for (const [id, url] of Object.entries(options.peers)) {
      try {
        new URL(url);
      } catch {
        throw new RangeError(`peer ${id} has an invalid base URL ${JSON.stringify(url)}: give scheme, host and port`);
      }
    }
  }

  listen(channel: string, handlers: PeerHandlers): () => void {
    if (this.handlers.has(channel)) throw new Error(`channel "${channel}" already has handlers on ${this.self}`);
    this.handlers.set(channel, handlers);
    return () => {
      if (this.handlers.get(channel) === handlers) this.handlers.delete(channel);
    };
  }

  send(to: MemberId, message: PeerMessage): void {
    if (this.closed || !this.options.peers[to]) return;
    const queue = this.queues.get(to) ?? [];
    if (queue.length >= this.maxQueued) {
      this.stats.droppedQueueFull++;
      return;
    }
    queue.push(message);
    this.queues.set(to, queue);
    if (!this.flushing.has(to)) void this.flush(to);
  }

  async request(to: MemberId, message: PeerMessage, options: RequestOptions): Promise<PeerMessage> {
    const base = this.options.peers[to];
    if (!base) throw new PeerUnreachableError(to, 'not a configured peer');
    const controller = new AbortController();
    const timer = this.options.clock.setTimer(options.timeoutMs, () => controller.abort(new Error(`no answer within ${options.timeoutMs} ms`)));
    const onAbort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await this.poster.post(
        `${base}${RAFT_HTTP_BASE}/requests`,
        JSON.stringify({ cluster: this.options.cluster, from: this.self, message }),
        this.headers(),
        controller.signal,
      );
      if (response.status < 200 || response.status > 299) throw new Error(`HTTP ${response.status}`);
      const parsed = peerMessage.safeParse(JSON.parse(response.text));
      if (!parsed.success) throw new Error('malformed response');
      return parsed.data;
    } catch (error) {
      throw new PeerUnreachableError(to, (error as Error).message, { cause: error });
    } finally {
      timer.cancel();
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Lifecycle hook: stop sending (queued messages are dropped, as a crash would). */
  stop(): void {
    this.closed = true;
    this.queues.clear();
    this.poster.destroy();
  }

  /** Sends what is queued for `to`, one POST at a time, until the queue is empty. */
  private async flush(to: MemberId): Promise<void> {
    this.flushing.add(to);
    try {
      for (;;) {
        const queue = this.queues.get(to);
        if (!queue || queue.length === 0 || this.closed) return;
        const batch = queue.splice(0, this.maxBatch);
        try {
          const response = await this.poster.post(
            `${this.options.peers[to]}${RAFT_HTTP_BASE}/messages`,
            JSON.stringify({ cluster: this.options.cluster, from: this.self, messages: batch }),
            this.headers(),
          );
          if (response.status < 200 || response.status > 299) throw new Error(`HTTP ${response.status}`);
          this.stats.sent += batch.length;
        } catch (error) {
          // Best effort: Raft retransmits. Log once per failure burst at debug level.
          this.stats.sendFailures += batch.length;
          this.log.debug({ to, err: (error as Error).message }, 'peer messages not delivered');
        }
      }
    } finally {
      this.flushing.delete(to);
    }
  }

  private headers(): Record<string, string> {
    const h: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.secret) h['x-baton-peer-secret'] = this.options.secret;
    return h;
  }

  /** The receiving side: mount on the member's public HTTP server. */
  router(): Router {
    const router = new Router({ prefix: RAFT_HTTP_BASE });
    router.post('/messages', async (ctx) => {
      const body = await this.admit(ctx, batchSchema);
      if (!body) return;
      for (const m of body.messages) {
        const handlers = this.handlers.get(m.channel);
        if (!handlers) continue;
        this.stats.received++;
        try {
          handlers.onMessage(body.from, m);
        } catch (error) {
          this.stats.handlerErrors++;
          this.log.error({ err: error, channel: m.channel }, 'a peer message handler threw');
        }
      }
      ctx.status = 204;
    });
    router.post('/requests', async (ctx) => {
      const body = await this.admit(ctx, requestSchema);
      if (!body) return;
      const handlers = this.handlers.get(body.message.channel);
      if (!handlers?.onRequest) {
        ctx.status = 404;
        ctx.body = { error: `no request handler for channel ${body.message.channel}` };
        return;
      }
      this.stats.received++;
      try {
        ctx.body = await handlers.onRequest(body.from, body.message);
      } catch (error) {
        this.stats.handlerErrors++;
        this.log.error({ err: error }, 'a peer request handler failed');
        ctx.status = 500;
        ctx.body = { error: 'the request handler failed' };
      }
    });
    return router;
  }

  /** Reads, limits and validates a peer's body; answers and returns undefined when refused. */
  private async admit<T extends { cluster: string; from: string }>(ctx: Context, schema: z.ZodType<T>): Promise<T | undefined> {
    if (this.options.secret && ctx.get('x-baton-peer-secret') !== this.options.secret) {
      this.stats.rejectedForeign++;
      ctx.status = 403;
      return undefined;
    }
    let raw: string;
    try {
      raw = await readBody(ctx, this.maxBodyBytes);
    } catch {
      this.stats.rejectedMalformed++;
      ctx.status = 413;
      return undefined;
    }
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      json = undefined;
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      this.stats.rejectedMalformed++;
      ctx.status = 400;
      ctx.body = { error: 'malformed peer message' };
      return undefined;
    }
    const body = parsed.data;
    if (body.cluster !== this.options.cluster || !this.options.peers[body.from] || body.from === this.self) {
      this.stats.rejectedForeign++;
      ctx.status = 403;
      ctx.body = { error: 'not a member of this cluster' };
      return undefined;
    }
    return body;
  }
}

/** The request body as text, refusing more than `limit` bytes. */
async function readBody(ctx: Context, limit: number): Promise<string> {
  const pre = (ctx.request as unknown as { body?: unknown }).body;
  if (pre !== undefined) return typeof pre === 'string' ? pre : JSON.stringify(pre);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new Error(`body over ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
