import { createParser } from 'eventsource-parser';
import type { operations as StreamNodeOperations } from './generated/stream-node.js';
import type { operations as AuthorityPublicOperations } from './generated/authority-public.js';
import { realSleep, realTimer } from './client-timers.js';
import type { OwnerRoutes } from './owner-routes.js';

/** A stream's ownership as its feed sends it (the `ownership` event). */
export type StreamOwnership = StreamNodeOperations['watchStreamOwnership']['responses'][200]['content']['application/json'];
/** An authority's home and epoch as its feed sends it (the `ownership` event). */
export type AuthorityOwnership = AuthorityPublicOperations['watchAuthorityOwnership']['responses'][200]['content']['application/json'];

export interface WatchOptions {
  /** Base URLs of the members to read the feed from: the first that answers, the next after a drop. */
  nodes: string[];
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Replaces the global fetch (a TLS-configured dispatcher, a test's recorder). */
  fetch?: (request: Request) => Promise<Response>;
  /** Wait before reconnecting after a drop or a refusal (default: what the server's `retry` says, else 1 s). */
  reconnectMs?: number;
  /** A feed silent this long (no event, no heartbeat) is taken as dropped and reopened (default 45 s: three heartbeats). */
  staleAfterMs?: number;
  /** Where calls go first: each event points the watched subject's write path at its next owner. */
  routes?: OwnerRoutes;
  /** Waits between reconnects (default: a real timer). */
  sleep?: (ms: number) => Promise<void>;
}

/** The feed refused the watch for good (unknown subject, bad credential): no reconnect helps. */
export class WatchRefusedError extends Error {
  constructor(
    readonly status: number,
    readonly problem: unknown,
  ) {
    super(`the ownership feed refused the watch: HTTP ${status}${describe(problem)}`);
  }
}

const FINAL_STATUSES = new Set([400, 401, 403, 404]);
const DEFAULT_STALE_AFTER_MS = 45_000;

/**
 * Follows one subject's ownership feed (server-sent events) across drops and members: `latest`
 * is the last event seen, `until` waits for one that satisfies a condition, and `onEvent`
 * tells of each. With `routes`, each event sends the subject's writes to its owner-to-be (or
 * owner) before a write is refused there.
 */
export class OwnershipWatch<Event> {
  latest?: Event;
  /** Set once the feed refused the watch for good. */
  error?: WatchRefusedError;
  private closed = false;
  private readonly listeners = new Set<(event: Event) => void>();
  private readonly current = new AbortController();
  private connection?: AbortController;
  private readonly done: Promise<void>;

  constructor(
    private readonly path: string,
    private readonly options: WatchOptions,
    private readonly route?: (event: Event) => { pathname: string; url: string | null },
  ) {
    if (options.nodes.length === 0) throw new RangeError('give at least one member to watch from');
    this.done = this.run();
  }

  onEvent(fn: (event: Event) => void): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  /** Resolves with the first event (the latest included) that satisfies `condition`; rejects on a refusal or close. */
  until(condition: (event: Event) => boolean): Promise<Event> {
    if (this.latest !== undefined && condition(this.latest)) return Promise.resolve(this.latest);
    if (this.error) return Promise.reject(this.error);
    return new Promise((resolve, reject) => {
      const stop = this.onEvent((event) => {
        if (!condition(event)) return;
        stop();
        this.current.signal.removeEventListener('abort', closed);
        resolve(event);
      });
      const closed = () => {
        stop();
        reject(this.error ?? new Error('the ownership watch was closed'));
      };
      this.current.signal.addEventListener('abort', closed, { once: true });
    });
  }

  /** Stops watching; resolves once the connection is closed. */
  async close(): Promise<void> {
    this.closed = true;
    this.current.abort();
    this.connection?.abort();
    await this.done;
  }

  private async run(): Promise<void> {
    const sleep = this.options.sleep ?? realSleep;
    let retryMs = this.options.reconnectMs ?? 1_000;
    for (let attempt = 0; !this.closed; attempt++) {
      const base = this.options.nodes[attempt % this.options.nodes.length]!;
      try {
        const suggested = await this.follow(base);
        if (suggested !== undefined && this.options.reconnectMs === undefined) retryMs = suggested;
      } catch (error) {
        if (error instanceof WatchRefusedError) {
          this.error = error;
          this.closed = true;
          this.current.abort();
          return;
        }
        // Dropped, stale or unreachable: the next member after the wait.
      }
      if (!this.closed) await Promise.race([sleep(retryMs), untilAborted(this.current.signal)]);
    }
  }

  /** Reads the feed from one member until it ends; answers the reconnect delay the server asked for. */
  private async follow(base: string): Promise<number | undefined> {
    const connection = new AbortController();
    this.connection = connection;
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    const request = new Request(new URL(this.path, base), { headers, signal: connection.signal });
    const stale = this.options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
    let silence = realTimer(stale, () => connection.abort());
    try {
      const response = await (this.options.fetch ?? fetch)(request);
      if (!response.ok || !response.body) {
        const problem = await response.json().catch(() => undefined);
        if (FINAL_STATUSES.has(response.status)) throw new WatchRefusedError(response.status, problem);
        return undefined;
      }
      let retry: number | undefined;
      const parser = createParser({
        onEvent: (message) => {
          if (message.event !== 'ownership') return;
          this.deliver(JSON.parse(message.data) as Event);
        },
        onRetry: (ms) => (retry = ms),
      });
      const decoder = new TextDecoder();
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        silence();
        silence = realTimer(stale, () => connection.abort());
        parser.feed(decoder.decode(chunk, { stream: true }));
        if (this.closed) break;
      }
      return retry;
    } finally {
      silence();
      connection.abort();
    }
  }

  private deliver(event: Event): void {
    this.latest = event;
    const route = this.route?.(event);
    if (route && route.url && this.options.routes) this.options.routes.set(route.pathname, route.url);
    for (const listener of [...this.listeners]) listener(event);
  }
}

/**
 * Watches a stream's owner. With `routes`, each event sends the stream's appends to the
 * owner-to-be once the source has closed the stream for a pending transfer, and to the owner
 * otherwise, so a producer reopens there before it is refused. While the source still serves, it
 * keeps getting the appends: sending them to the owner-to-be then would only park them sooner.
 */
export function watchStreamOwnership(stream: string, options: WatchOptions): OwnershipWatch<StreamOwnership> {
  const path = `/v1/streams/${encodeURIComponent(stream)}`;
  return new OwnershipWatch<StreamOwnership>(`${path}/ownership`, options, (event) => ({
    pathname: `${path}/records`,
    url: event.state === 'closed' && event.pending_target_address ? event.pending_target_address : event.address,
  }));
}

/** Watches an authority's home and epoch on an authority member's public server. */
export function watchAuthorityOwnership(authority: string, options: WatchOptions): OwnershipWatch<AuthorityOwnership> {
  const path = `/availability/v1/authorities/${encodeURIComponent(authority)}`;
  return new OwnershipWatch<AuthorityOwnership>(`${path}/ownership`, options, (event) => ({
    pathname: `${path}/writes`,
    url: event.home_urls[0] ?? null,
  }));
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

function describe(problem: unknown): string {
  const detail = (problem as { detail?: unknown } | undefined)?.detail;
  return typeof detail === 'string' ? `: ${detail}` : '';
}
