import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import {
  type Clock,
  type Logger,
  PeerUnreachableError,
  type MemberId,
  type PeerHandlers,
  type PeerMessage,
  type PeerTransport,
  type RequestOptions,
  token,
} from '@baton/contracts';
import {
  DEFAULT_JSON_BOUNDS,
  jsonBoundsViolation,
  type JsonBounds,
  assertPeerSender,
  peerOf,
  requirePeer,
  type PeerAuthenticator,
  HttpProblem,
  problems,
  problemHandling,
  childSpan,
  traceHeaders,
} from '@baton/http';
import { PeerPoster } from './http-post.js';
import { LargeMessageSlots } from './large-message-slots.js';
import { BodyRefused, bodyTimedOut, defaultBodyDeadlineMs, readBody, tooLarge } from './peer-body.js';
import { batchSchema, member, peerMessage, RAFT_HTTP_BASE, requestSchema } from './peer-wire.js';
import { readPeerStream, type InboundPeerStream } from './peer-stream-in.js';
import { OutboundPeerStream } from './peer-stream-out.js';

export { RAFT_HTTP_BASE } from './peer-wire.js';

export { defaultBodyDeadlineMs } from './peer-body.js';
export { RAFT_PEER_OPERATIONS } from './peer-routes-document.js';

export interface HttpPeerTransportOptions {
  self: MemberId;
  /** Every other member's base URL (scheme, host, port), e.g. "http://10.0.0.2:8080". */
  peers: Record<MemberId, string>;
  /** Requests carrying another cluster id are refused: two clusters on one network never mix. */
  cluster: string;
  /** Who this member is to its peers, and how it checks who they are (framework/http/peer-auth). */
  auth: PeerAuthenticator;
  clock: Clock;
  logger: Logger;
  /** Largest stream frame or peer request accepted (everything but large messages). Default 4 MiB. */
  maxMessageBytes?: number;
  /**
   * Largest message sent on its own POST (/messages): snapshots, and appends whose entries
   * together exceed maxMessageBytes. One is read at a time per sender. Default 64 MiB.
   */
  maxLargeMessageBytes?: number;
  /**
   * Large messages read at once from all senders together (each buffers up to
   * maxLargeMessageBytes); more answer 503. Default: one per configured peer, so a peer that
   * stalls its body never keeps another peer's snapshot out. Lower it to bound memory, at the
   * price that a stalled sender may then hold the last slot until its deadline.
   */
  maxLargeMessagesInFlight?: number;
  /**
   * A large message whose body has not arrived whole this long after its headers is refused
   * (408) and its connection closed, which frees its slot. Default: maxLargeMessageBytes at
   * 2 MiB/s, at least 5 s (32 s for 64 MiB). Raise it with maxLargeMessageBytes on slow links:
   * a snapshot that cannot arrive within it is refused every time Raft sends it again.
   */
  largeMessageDeadlineMs?: number;
  /** Peer requests (forwarded proposals) handled at once; more answer 503. Default 32. */
  maxConcurrentRequests?: number;
  /**
   * A peer request whose body has not arrived whole this long after its headers is refused
   * (408) and its connection closed, which frees its request slot. Default: maxMessageBytes at
   * the same slow rate as large messages, at least 5 s (5 s for 4 MiB).
   */
  requestDeadlineMs?: number;
  /** One-way messages waiting for one peer before new ones are dropped (best effort). */
  maxQueuedPerPeer?: number;
  /** A stream to a peer is replaced after this long (servers cut long requests). Default 60 s. */
  streamMaxAgeMs?: number;
  /** After a stream to a peer failed, messages to it are dropped this long before reconnecting. Default 100 ms. */
  reconnectMs?: number;
  /**
   * Told of every frame of a stream that is skipped (the stream goes on): the answer to the
   * stream cannot say so, so a host counts these in its metrics.
   */
  onFrameRefused?: (reason: FrameRefusal) => void;
}

/** Why one frame of a peer stream was skipped. */
export type FrameRefusal = 'frame-json-limits' | 'malformed-frame';

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
  /** Requests without a valid peer credential (401). */
  rejectedUnauthenticated: number;
  /** Bodies or frames over their bound (413). */
  rejectedTooLarge: number;
  /** Requests or streams over the concurrency bounds (503). */
  rejectedBusy: number;
  /**
   * Large messages and peer requests whose body did not arrive whole within its deadline
   * (largeMessageDeadlineMs, requestDeadlineMs: 408).
   */
  rejectedSlowBody: number;
  handlerErrors: number;
}


/** How often open inbound streams look whether their server stopped (see watchInbound). */
const INBOUND_CHECK_MS = 200;

/** Stream frames and peer requests: far above a heartbeat or an append of small entries. */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Snapshots, until they travel in chunks, and appends of large entries. */
export const DEFAULT_MAX_LARGE_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Streams one member may hold open here (one in use, a few being replaced). */
const MAX_STREAMS_PER_PEER = 4;

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
 * on its headers (the peer credential, cluster, sender), then every frame is size- and
 * depth-limited before it is parsed and validated
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
    rejectedUnauthenticated: 0,
    rejectedTooLarge: 0,
    rejectedBusy: 0,
    rejectedSlowBody: 0,
    handlerErrors: 0,
  };
  private readonly handlers = new Map<string, PeerHandlers>();
  private readonly streams = new Map<MemberId, OutboundPeerStream>();
  private readonly inbound = new Set<InboundPeerStream>();
  private watchingInbound = false;
  private readonly log: Logger;
  private readonly maxMessageBytes: number;
  private readonly maxLargeMessageBytes: number;
  private readonly maxConcurrentRequests: number;
  private readonly bounds: JsonBounds;
  private readonly auth: PeerAuthenticator;
  private requestsInFlight = 0;
  private readonly largeSlots: LargeMessageSlots;
  private readonly largeMessageDeadlineMs: number;
  private readonly requestDeadlineMs: number;
  private readonly inboundFrom = new Map<MemberId, number>();
  /** Peers a large message is being posted to: one at a time each, later ones are dropped. */
  private readonly largeTo = new Set<MemberId>();
  private readonly maxQueued: number;
  private closed = false;
  private readonly poster = new PeerPoster();

  constructor(private readonly options: HttpPeerTransportOptions) {
    this.self = options.self;
    this.log = options.logger.child({ plugin: 'raft-http', member: options.self });
    this.auth = options.auth;
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.maxLargeMessageBytes = Math.max(options.maxLargeMessageBytes ?? DEFAULT_MAX_LARGE_MESSAGE_BYTES, this.maxMessageBytes);
    this.maxConcurrentRequests = options.maxConcurrentRequests ?? 32;
    // A string may fill a large message (a snapshot's state), but nothing nests deeper than the
    // default: the deepest command the log takes (MAX_COMMAND_DEPTH, driver/wire.ts) follows from it.
    this.bounds = { ...DEFAULT_JSON_BOUNDS, maxStringLength: this.maxLargeMessageBytes };
    this.maxQueued = options.maxQueuedPerPeer ?? 10_000;
    this.largeSlots = new LargeMessageSlots(options.maxLargeMessagesInFlight ?? Math.max(1, Object.keys(options.peers).length));
    this.largeMessageDeadlineMs = positiveMs('largeMessageDeadlineMs', options.largeMessageDeadlineMs ?? defaultBodyDeadlineMs(this.maxLargeMessageBytes));
    this.requestDeadlineMs = positiveMs('requestDeadlineMs', options.requestDeadlineMs ?? defaultBodyDeadlineMs(this.maxMessageBytes));
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

  addressOf(member: MemberId): string | undefined {
    return Object.hasOwn(this.options.peers, member) ? this.options.peers[member] : undefined;
  }

  /**
   * A voter being added: its address until the process restarts (then its config's `peers`
   * must name it). A member already configured keeps its configured address.
   */
  addPeer(member: MemberId, address: string): boolean {
    if (member === this.self || this.closed) return false;
    if (Object.hasOwn(this.options.peers, member)) return this.options.peers[member] === address;
    let url: URL;
    try {
      url = new URL(address);
    } catch {
      return false;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
    this.options.peers[member] = address.replace(/\/+$/, '');
    this.log.info({ peer: member, address }, 'learned the address of a voter being added');
    return true;
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
    // Own keys only: a member named "constructor" or "__proto__" is no peer unless configured.
    if (this.closed || !Object.hasOwn(this.options.peers, to)) return;
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
    if (frame.length > this.maxMessageBytes / 3 && Buffer.byteLength(frame, 'utf8') > this.maxMessageBytes) {
      this.postLarge(to, message);
      return;
    }
    const refused = this.streamTo(to).push(frame);
    if (refused === undefined) this.stats.sent++;
    else if (refused === 'full') this.stats.droppedQueueFull++;
    else if (refused === 'unreachable') this.stats.sendFailures++;
  }

  /**
   * A message over the stream's frame bound (a snapshot, a large append) goes on its own POST to
   * /messages, one at a time per peer: while one is in flight, later ones are dropped (Raft
   * sends them again).
   */
  private postLarge(to: MemberId, message: PeerMessage): void {
    if (this.largeTo.has(to)) {
      this.stats.droppedQueueFull++;
      return;
    }
    this.largeTo.add(to);
    this.stats.sent++;
    const body = JSON.stringify({ cluster: this.options.cluster, from: this.self, messages: [message] });
    this.poster
      .post(`${this.options.peers[to]}${RAFT_HTTP_BASE}/messages`, body, this.headers())
      .then((answer) => {
        if (answer.status < 200 || answer.status > 299) throw new Error(`HTTP ${answer.status}`);
      })
      .catch((error: Error) => {
        this.stats.sendFailures++;
        this.log.debug({ to, err: error.message }, 'large message to peer failed');
      })
      .finally(() => this.largeTo.delete(to));
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
        maxBufferedBytes: this.maxLargeMessageBytes,
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
    const base = Object.hasOwn(this.options.peers, to) ? this.options.peers[to] : undefined;
    if (!base) throw new PeerUnreachableError(to, 'not a configured peer', { notSent: true });
    const controller = new AbortController();
    const timer = this.options.clock.setTimer(options.timeoutMs, () =>
      controller.abort(new Error(`no answer within ${options.timeoutMs} ms`)),
    );
    const onAbort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      // Inside the request being traced (a forwarded proposal below an admin request): its
      // traceparent goes along, and the leader's server span continues the same trace.
      const response = await childSpan(`raft ${message.channel}`, { 'baton.peer': to }, () =>
        this.poster.post(
          `${base}${RAFT_HTTP_BASE}/requests`,
          JSON.stringify({ cluster: this.options.cluster, from: this.self, message }),
          { ...this.headers(), ...traceHeaders() },
          controller.signal,
        ),
      );
      if (response.status < 200 || response.status > 299)
        throw new Error(`HTTP ${response.status}`);
      const parsed = peerMessage.safeParse(JSON.parse(response.text));
      if (!parsed.success) throw new Error('malformed response');
      return parsed.data;
    } catch (error) {
      throw new PeerUnreachableError(to, (error as Error).message, {
        cause: error,
        notSent: isConnectFailure(error),
      });
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
    if (jsonBoundsViolation(frame, this.bounds) !== undefined) {
      this.stats.rejectedMalformed++;
      this.options.onFrameRefused?.('frame-json-limits');
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(frame);
    } catch {
      json = undefined;
    }
    if (!isPeerMessage(json)) {
      this.stats.rejectedMalformed++;
      this.options.onFrameRefused?.('malformed-frame');
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
    return { 'content-type': 'application/json', ...this.auth.outboundHeaders() };
  }

  /** The receiving side: mount on the member's public HTTP server. */
  router(): Router {
    const router = new Router({ prefix: RAFT_HTTP_BASE });
    // Every refusal below is a problem+json answer, whatever app the router is mounted in.
    router.use(problemHandling({ logger: this.log }));
    const open: Middleware = async (_ctx, next) => {
      if (this.closed) throw new HttpProblem({ status: 503, type: 'member-stopping', detail: 'this member is stopping', headers: { 'Retry-After': '1' } });
      await next();
    };
    // Who speaks is settled on the headers, before a byte of the body is read. Part of each
    // route rather than router.use, so a refusal is counted under the route's own name.
    const gate = [requirePeer(this.auth, () => this.stats.rejectedUnauthenticated++), open];
    router.post('/stream', ...gate, async (ctx) => {
      const from = this.admitStream(ctx);
      const open = this.inboundFrom.get(from) ?? 0;
      if (open >= MAX_STREAMS_PER_PEER) {
        this.stats.rejectedBusy++;
        throw busy(`member ${from} already has ${open} streams open here`);
      }
      this.inboundFrom.set(from, open + 1);
      try {
        const stream = readPeerStream(ctx.req, this.maxMessageBytes, (frame) => {
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
          this.stats.rejectedTooLarge++;
          throw tooLarge(this.maxMessageBytes, 'a stream frame');
        }
        ctx.status = 204;
      } finally {
        const left = (this.inboundFrom.get(from) ?? 1) - 1;
        if (left === 0) this.inboundFrom.delete(from);
        else this.inboundFrom.set(from, left);
      }
    });
    router.post('/messages', ...gate, async (ctx) => {
      // Snapshots and oversized appends come this way: a large bound, one at a time per sender,
      // each within a deadline, so a sender that stalls its body holds its own slot only, and
      // not for long.
      const body = await this.withLargeSlot(ctx, () =>
        this.admit(ctx, batchSchema, this.maxLargeMessageBytes, { ms: this.largeMessageDeadlineMs, option: 'largeMessageDeadlineMs' }),
      );
      for (const m of body.messages) this.deliver(body.from, m);
      ctx.status = 204;
    });
    router.post('/requests', ...gate, async (ctx) => {
      // Within a deadline too: a sender that stalls its body would otherwise hold one of the
      // request slots until Node's request timeout, and enough such bodies every slot. A member
      // that is no peer here is refused on its headers, before it takes one.
      this.refuseForeignSender(ctx);
      await this.withRequestSlot(async () => {
        const body = await this.admit(ctx, requestSchema, this.maxMessageBytes, { ms: this.requestDeadlineMs, option: 'requestDeadlineMs' });
        const handlers = this.handlers.get(body.message.channel);
        if (!handlers?.onRequest) {
          throw new HttpProblem({ status: 404, type: 'unknown-channel', detail: `no request handler for channel ${body.message.channel}` });
        }
        this.stats.received++;
        try {
          ctx.body = await handlers.onRequest(body.from, body.message);
        } catch (error) {
          this.stats.handlerErrors++;
          this.log.error({ err: error }, 'a peer request handler failed');
          throw new HttpProblem({ status: 500, type: 'internal', detail: 'the request handler failed' });
        }
      });
    });
    return router;
  }

  /** Runs `work` holding one of the bounded request slots; 503 when none is free. */
  private async withRequestSlot<T>(work: () => Promise<T>): Promise<T> {
    if (this.requestsInFlight >= this.maxConcurrentRequests) {
      this.stats.rejectedBusy++;
      throw busy(`${this.maxConcurrentRequests} peer requests are already being handled`);
    }
    this.requestsInFlight++;
    try {
      return await work();
    } finally {
      this.requestsInFlight--;
    }
  }

  /**
   * Runs `work` holding the authenticated sender's large-message slot; 503 while that sender
   * has one being read, or every slot is taken. A member this one does not count among its
   * peers is refused before it takes a slot.
   */
  private async withLargeSlot<T>(ctx: Context, work: () => Promise<T>): Promise<T> {
    const sender = this.refuseForeignSender(ctx);
    const slot = this.largeSlots.take(sender);
    if ('refused' in slot) {
      this.stats.rejectedBusy++;
      throw busy(
        slot.refused === 'sender-busy'
          ? `a large message from ${sender} is already being read`
          : `${this.largeSlots.limit} peer large messages are already being read`,
      );
    }
    try {
      return await work();
    } finally {
      slot.release();
    }
  }

  /**
   * The authenticated sender, when this member counts it among its peers; otherwise the 403,
   * on the headers, before the sender takes a slot.
   */
  private refuseForeignSender(ctx: Context): MemberId {
    const sender = peerOf(ctx).member;
    if (!this.isPeer(sender)) {
      this.stats.rejectedForeign++;
      throw notAMember(sender, this.options.cluster);
    }
    return sender;
  }

  /** A configured peer (own keys only), never this member itself. */
  private isPeer(id: MemberId): boolean {
    return Object.hasOwn(this.options.peers, id) && id !== this.self;
  }

  /** Admits a stream on its headers (cluster, sender); throws the refusal. */
  private admitStream(ctx: Context): MemberId {
    const cluster = ctx.get('x-baton-cluster');
    const from = ctx.get('x-baton-from') || peerOf(ctx).member;
    if (!cluster || !member.safeParse(from).success) {
      this.stats.rejectedMalformed++;
      throw problems.badRequest('a stream names its cluster (x-baton-cluster) and sender (x-baton-from)');
    }
    this.checkSender(ctx, cluster, from);
    return from;
  }

  /** The sender named must be the authenticated member, and a member of this cluster. */
  private checkSender(ctx: Context, cluster: string, from: MemberId): void {
    try {
      assertPeerSender(ctx, from);
    } catch (error) {
      this.stats.rejectedForeign++;
      throw error;
    }
    if (cluster !== this.options.cluster || !this.isPeer(from)) {
      this.stats.rejectedForeign++;
      throw notAMember(from, this.options.cluster);
    }
  }

  /**
   * Reads, bounds and validates a peer's body before it is parsed, within `deadline.ms` of its
   * headers (`deadline.option` is the setting that says so, named in the 408); throws the refusal.
   */
  private async admit<T extends { cluster: string; from: string }>(
    ctx: Context,
    schema: z.ZodType<T>,
    limit: number,
    deadline: { ms: number; option: string },
  ): Promise<T> {
    let raw: string;
    try {
      raw = await readBody(ctx, limit, { clock: this.options.clock, ms: deadline.ms });
    } catch (error) {
      if (!(error instanceof BodyRefused)) throw error; // the sender went away: no one to answer
      if (error.reason === 'too_large') {
        this.stats.rejectedTooLarge++;
        throw tooLarge(limit, 'a peer message');
      }
      this.stats.rejectedSlowBody++;
      throw bodyTimedOut(error.deadlineMs, deadline.option);
    }
    const violation = jsonBoundsViolation(raw, this.bounds);
    if (violation !== undefined) {
      this.stats.rejectedMalformed++;
      throw new HttpProblem({ status: 400, type: 'json-limits', detail: `peer message refused before parsing: ${violation}` });
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
      throw new HttpProblem({ status: 400, type: 'malformed-peer-message', detail: 'malformed peer message' });
    }
    this.checkSender(ctx, parsed.data.cluster, parsed.data.from);
    return parsed.data;
  }
}


/** 503 with Retry-After: the member is fine, it is only at its bound for concurrent peer work. */
function busy(detail: string): HttpProblem {
  return new HttpProblem({ status: 503, type: 'peer-busy', detail: `${detail}: retry shortly`, headers: { 'Retry-After': '1', Connection: 'close' } });
}

function positiveMs(option: string, ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0) throw new RangeError(`${option} must be a positive number of milliseconds, got ${ms}`);
  return ms;
}

function notAMember(from: MemberId, cluster: string): HttpProblem {
  return new HttpProblem({ status: 403, type: 'not-a-member', detail: `${from} is not a member of cluster ${cluster} as this member knows it` });
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


/**
 * Errors raised while connecting, before a byte of the request left: the peer never saw it. A
 * reset or a timeout on an open connection may follow a delivered request, so they are not here.
 */
const CONNECT_FAILURES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function isConnectFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CONNECT_FAILURES.has(code);
}
