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
import { readPeerStream, type InboundPeerStream } from './peer-stream-in.js';
import { OutboundPeerStream } from './peer-stream-out.js';

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
  /** A stream to a peer is replaced after this long (servers cut long requests). Default 60 s. */
  streamMaxAgeMs?: number;
  /** After a stream to a peer failed, messages to it are dropped this long before reconnecting. Default 100 ms. */
  reconnectMs?: number;
}

/** What the HTTP side saw: drops by reason, for operators and tests. */
export interface HttpTransportStats {
  /** Messages handed to a peer's stream. */
  sent: number;
  /** Streams that failed (refused, connection lost) plus messages dropped while a peer was unreachable. */
  sendFailures: number;
  droppedQueueFull: number;
  received: number;
  rejectedMalformed: number;
  rejectedForeign: number;
  handlerErrors: number;
}

const member = z.string().min(1).max(256);
const peerMessage = z.object({ channel: z.string().min(1).max(64), body: z.unknown() });
const batchSchema = z.object({
  cluster: z.string(),
  from: member,
  messages: z.array(peerMessage).max(100_000),
});
const requestSchema = z.object({ cluster: z.string(), from: member, message: peerMessage });

/** How often open inbound streams look whether their server stopped (see watchInbound). */
const INBOUND_CHECK_MS = 200;

/** How long a replaced stream waits for the receiver to answer its end before it is cut. */
const STREAM_DRAIN_TIMEOUT_MS = 2_000;

/** How long `stop` waits for peers to answer the end of our streams. */
const STOP_WAIT_MS = 500;

/** The router a host mounts on its public server (a token of this plugin, not a contract). */
export const RAFT_PEER_ROUTER = token<Router>('RaftPeerRouter');

/**
 * PeerTransport over HTTP. One-way messages travel on one long-lived stream per peer (a POST
 * to `/stream` whose body is newline-delimited JSON frames, see peer-stream-out.ts), so they
 * leave as soon as they are sent, in order, without a request per message; requests are one
 * POST each on kept-alive connections. The receiving side is `router()`: a stream is admitted
 * on its headers (secret, cluster, sender), then every frame is size-limited and validated
 * with zod; a malformed frame or body, an unknown sender or another cluster's traffic is
 * refused and counted, and a throwing handler never takes the member down. `/messages` (a
 * batch in one POST) is still served, for senders that post instead of streaming.
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
  private readonly streams = new Map<MemberId, OutboundPeerStream>();
  private readonly inbound = new Set<InboundPeerStream>();
  private watchingInbound = false;
  private readonly log: Logger;
  private readonly maxBodyBytes: number;
  private readonly maxQueued: number;
  private closed = false;
  private readonly poster = new PeerPoster();

  constructor(private readonly options: HttpPeerTransportOptions) {
    this.self = options.self;
    this.log = options.logger.child({ plugin: 'raft-http', member: options.self });
    this.maxBodyBytes = options.maxBodyBytes ?? 64 * 1024 * 1024;
    this.maxQueued = options.maxQueuedPerPeer ?? 10_000;
    for (const [id, url] of Object.entries(options.peers)) {
      try {
        new URL(url);
      } catch {
        throw new RangeError(
          `peer ${id} has an invalid base URL ${JSON.stringify(url)}: give scheme, host and port`,
        );
      }
    }
  }

  listen(channel: string, handlers: PeerHandlers): () => void {
    if (this.handlers.has(channel))
      throw new Error(`channel "${channel}" already has handlers on ${this.self}`);
    this.handlers.set(channel, handlers);
    return () => {
      if (this.handlers.get(channel) === handlers) this.handlers.delete(channel);
    };
  }

  send(to: MemberId, message: PeerMessage): void {
    if (this.closed || !this.options.peers[to]) return;
    let frame: string;
    try {
      frame = JSON.stringify(message);
    } catch (error) {
      // A body that is not JSON (a cycle, a BigInt) is the sender's bug: drop it, never throw.
      this.stats.sendFailures++;
      this.log.warn(
        { to, channel: message.channel, err: (error as Error).message },
        'peer message is not JSON; dropped',
      );
      return;
    }
    const refused = this.streamTo(to).push(frame);
    if (refused === undefined) this.stats.sent++;
    else if (refused === 'full') this.stats.droppedQueueFull++;
    else if (refused === 'unreachable') this.stats.sendFailures++;
  }

  private streamTo(to: MemberId): OutboundPeerStream {
    let stream = this.streams.get(to);
    if (!stream) {
      stream = new OutboundPeerStream({
        url: `${this.options.peers[to]}${RAFT_HTTP_BASE}/stream`,
        headers: {
          ...this.headers(),
          'x-baton-cluster': this.options.cluster,
          'x-baton-from': this.self,
        },
        clock: this.options.clock,
        maxPendingFrames: this.maxQueued,
        maxBufferedBytes: this.maxBodyBytes,
        maxAgeMs: this.options.streamMaxAgeMs ?? 60_000,
        retryMs: this.options.reconnectMs ?? 100,
        drainTimeoutMs: STREAM_DRAIN_TIMEOUT_MS,
        onFailure: (error) => {
          // Best effort: Raft retransmits. Debug level: a peer that is down fails every retry.
          this.stats.sendFailures++;
          this.log.debug(
            { to, err: error.message },
            'stream to peer failed; messages in it are lost',
          );
        },
      });
      this.streams.set(to, stream);
    }
    return stream;
  }

  async request(to: MemberId, message: PeerMessage, options: RequestOptions): Promise<PeerMessage> {
    const base = this.options.peers[to];
    if (!base) throw new PeerUnreachableError(to, 'not a configured peer');
    const controller = new AbortController();
    const timer = this.options.clock.setTimer(options.timeoutMs, () =>
      controller.abort(new Error(`no answer within ${options.timeoutMs} ms`)),
    );
    const onAbort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await this.poster.post(
        `${base}${RAFT_HTTP_BASE}/requests`,
        JSON.stringify({ cluster: this.options.cluster, from: this.self, message }),
        this.headers(),
        controller.signal,
      );
      if (response.status < 200 || response.status > 299)
        throw new Error(`HTTP ${response.status}`);
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

  /**
   * Lifecycle hook: stop sending (unsent messages are dropped, as a crash would), end our
   * streams cleanly and the streams peers opened to us, so their senders reconnect to whatever
   * serves next. Resolves once peers answered our streams' ends, or after at most half a second.
   */
  async stop(): Promise<void> {
    this.closed = true;
    const ended = [...this.streams.values()].map((stream) => stream.close());
    this.streams.clear();
    for (const stream of this.inbound) stream.close();
    this.poster.destroy();
    // Let peers see each stream end (not a broken request), but never wait long on one that is down.
    const waited = new AbortController();
    await Promise.race([
      Promise.all(ended),
      this.options.clock.sleep(STOP_WAIT_MS, waited.signal).catch(() => undefined),
    ]);
    waited.abort();
  }

  /** Hands one admitted message to its channel's handler; a throwing handler is counted, never fatal. */
  private deliver(from: MemberId, m: PeerMessage): void {
    const handlers = this.handlers.get(m.channel);
    if (!handlers) return;
    this.stats.received++;
    try {
      handlers.onMessage(from, m);
    } catch (error) {
      this.stats.handlerErrors++;
      this.log.error({ err: error, channel: m.channel }, 'a peer message handler threw');
    }
  }

  /** Parses and validates one stream frame; a bad frame is counted and skipped, the stream goes on. */
  private onFrame(from: MemberId, frame: string): void {
    if (this.closed) return;
    let json: unknown;
    try {
      json = JSON.parse(frame);
    } catch {
      json = undefined;
    }
    if (!isPeerMessage(json)) {
      this.stats.rejectedMalformed++;
      return;
    }
    this.deliver(from, { channel: json.channel, body: json.body });
  }

  /**
   * An HTTP server waits for requests in flight when it stops, and a stream never ends by
   * itself: while streams are open, check now and then whether their server stopped
   * listening, and end those (their senders reconnect elsewhere or wait).
   */
  private watchInbound(): void {
    if (this.watchingInbound) return;
    this.watchingInbound = true;
    const check = () => {
      for (const stream of this.inbound) if (stream.serverStopped()) stream.close();
      if (this.inbound.size === 0 || this.closed) {
        this.watchingInbound = false;
        return;
      }
      this.options.clock.setTimer(INBOUND_CHECK_MS, check);
    };
    this.options.clock.setTimer(INBOUND_CHECK_MS, check);
  }

  private headers(): Record<string, string> {
    const h: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.secret) h['x-baton-peer-secret'] = this.options.secret;
    return h;
  }

  /** The receiving side: mount on the member's public HTTP server. */
  router(): Router {
    const router = new Router({ prefix: RAFT_HTTP_BASE });
    router.post('/stream', async (ctx) => {
      const from = this.admitStream(ctx);
      if (from === undefined) return;
      const stream = readPeerStream(ctx.req, this.maxBodyBytes, (frame) => {
        if (stream.serverStopped()) stream.close();
        else this.onFrame(from, frame);
      });
      this.inbound.add(stream);
      this.watchInbound();
      const end = await stream.done;
      this.inbound.delete(stream);
      // Ended by us mid-body: the connection cannot carry another request.
      if (end !== 'ended') ctx.set('connection', 'close');
      if (end === 'too_large') {
        this.stats.rejectedMalformed++;
        ctx.status = 413;
        ctx.body = { error: `a frame is over ${this.maxBodyBytes} bytes` };
        return;
      }
      ctx.status = 204;
    });
    router.post('/messages', async (ctx) => {
      const body = await this.admit(ctx, batchSchema);
      if (!body) return;
      for (const m of body.messages) this.deliver(body.from, m);
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

  /** Admits a stream on its headers; answers and returns undefined when refused. */
  private admitStream(ctx: Context): MemberId | undefined {
    if (this.closed) {
      ctx.status = 503;
      ctx.body = { error: 'this member is stopping' };
      return undefined;
    }
    if (this.options.secret && ctx.get('x-baton-peer-secret') !== this.options.secret) {
      this.stats.rejectedForeign++;
      ctx.status = 403;
      return undefined;
    }
    const cluster = ctx.get('x-baton-cluster');
    const from = ctx.get('x-baton-from');
    if (!cluster || !member.safeParse(from).success) {
      this.stats.rejectedMalformed++;
      ctx.status = 400;
      ctx.body = {
        error: 'a stream names its cluster (x-baton-cluster) and sender (x-baton-from)',
      };
      return undefined;
    }
    if (cluster !== this.options.cluster || !this.options.peers[from] || from === this.self) {
      this.stats.rejectedForeign++;
      ctx.status = 403;
      ctx.body = { error: 'not a member of this cluster' };
      return undefined;
    }
    return from;
  }

  /** Reads, limits and validates a peer's body; answers and returns undefined when refused. */
  private async admit<T extends { cluster: string; from: string }>(
    ctx: Context,
    schema: z.ZodType<T>,
  ): Promise<T | undefined> {
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
    if (
      body.cluster !== this.options.cluster ||
      !this.options.peers[body.from] ||
      body.from === this.self
    ) {
      this.stats.rejectedForeign++;
      ctx.status = 403;
      ctx.body = { error: 'not a member of this cluster' };
      return undefined;
    }
    return body;
  }
}

/**
 * The frame check of `peerMessage` written out: it runs for every message on a stream, and the
 * body is validated by the channel's handler anyway (Raft checks every field of its messages).
 */
function isPeerMessage(value: unknown): value is PeerMessage {
  if (typeof value !== 'object' || value === null) return false;
  const { channel } = value as { channel?: unknown };
  return (
    typeof channel === 'string' && channel.length > 0 && channel.length <= 64 && 'body' in value
  );
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
