import type { Middleware } from 'openapi-fetch';
import { realSleep } from './client-timers.js';
import { OwnerRoutes } from './owner-routes.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
const NOT_OWNER = 'urn:baton:problem:not-owner';
const NOT_HOME = 'urn:baton:problem:not-home';
const STREAM_FENCED = 'urn:baton:problem:stream-fenced';
/** The pause before asking another node when one could not be reached. */
const UNREACHABLE_PAUSE_MS = 200;

/** How a client retries: what today's StreamClient did by hand, as openapi-fetch middleware. */
export interface RetryOptions {
  /** Requests sent for one call at most, the first included (default 5). */
  maxAttempts?: number;
  /** A Retry-After longer than this is not waited for: the answer is returned (default 10 s). */
  maxRetryAfterMs?: number;
  /** Waits before a retry (default: a real timer); tests record the delays instead. */
  sleep?: (ms: number) => Promise<void>;
  /** Mints the Idempotency-Key of a change that has none (default: a random UUID). */
  mintKey?: () => string;
  /** Where each path's calls go first; share it with an ownership feed to route ahead of refusals. */
  routes?: OwnerRoutes;
  /**
   * Every node this client may ask (base URLs). With two or more, a node that cannot be reached
   * (its host gone) or that answers 503 stream-fenced (it lost the stream and does not know to
   * whom yet) is left for the next one, which knows where the stream went, or will once it is
   * failed over. Without, a connection failure is the caller's.
   */
  nodes?: string[];
}

/**
 * Gives every change (POST, PUT, PATCH, DELETE) an Idempotency-Key unless the caller set one, so
 * that a retry of it, by this client or by the caller with the same key, is answered with the
 * first decision instead of being applied twice. The key the node used comes back in the answer.
 */
export function idempotencyKeyMiddleware(mintKey: () => string = () => globalThis.crypto.randomUUID()): Middleware {
  return {
    onRequest({ request }) {
      if (request.method === 'GET' || request.method === 'HEAD' || request.headers.has(IDEMPOTENCY_KEY_HEADER)) return undefined;
      const keyed = new Request(request);
      keyed.headers.set(IDEMPOTENCY_KEY_HEADER, mintKey());
      return keyed;
    },
  };
}

/**
 * Follows a 409 not-owner hint to the node it names (the owner, or the owner-to-be during a
 * handoff), and a 421 not-home refusal to the first member of the authority's home it names,
 * and sends later calls for that path there first; waits out a 503 or 429 with
 * Retry-After and sends again; given `nodes`, leaves a node it cannot reach, or one that lost the
 * stream (503 stream-fenced), for the next. Every resend is the same request, Idempotency-Key included, so
 * a change whose first answer was lost is not applied twice. An append parked on the owner-to-be
 * is simply a slow answer: nothing to do here.
 */
export function retryMiddleware(options: RetryOptions = {}): Middleware {
  const maxAttempts = options.maxAttempts ?? 5;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 10_000;
  const sleep = options.sleep ?? realSleep;
  // The unsent copy of each request, to send again (a sent request's body is consumed).
  const pending = new Map<string, Request>();
  // Where the last not-owner hint (or a watched feed) sent each path: its next call goes there directly.
  const owners = options.routes ?? new OwnerRoutes();
  const nodes = (options.nodes ?? []).map((node) => new URL(node).origin);
  // One chase of a request: what to do after each answer (or failure to get one) until it is final.
  const chase = async (original: Request, first: Outcome, send: (request: Request) => Promise<Response>): Promise<Outcome> => {
    let outcome = first;
    let target = new URL(original.url);
    for (let attempt = 1; attempt < maxAttempts; attempt++) {
      const next = 'error' in outcome ? elsewhere(target, nodes, UNREACHABLE_PAUSE_MS) : await nextTarget(outcome.response, target, maxRetryAfterMs, nodes);
      if (!next) break;
      if (next.lost) owners.forget(target.pathname);
      if (next.waitMs > 0) await sleep(next.waitMs);
      target = next.url;
      if (target.origin !== new URL(original.url).origin) owners.set(target.pathname, target.origin);
      if ('response' in outcome) await outcome.response.body?.cancel();
      try {
        outcome = { response: await send(new Request(target, original.clone())) };
      } catch (error) {
        outcome = { error };
      }
    }
    return outcome;
  };
  return {
    onRequest({ request, id }) {
      const url = new URL(request.url);
      const owner = owners.get(url.pathname);
      const routed = owner && owner !== url.origin ? new Request(new URL(url.pathname + url.search, owner), request) : request;
      pending.set(id, routed.clone());
      return routed === request ? undefined : routed;
    },
    async onResponse({ response, id, options: client }) {
      const original = pending.get(id);
      pending.delete(id);
      if (!original) return undefined;
      const outcome = await chase(original, { response }, client.fetch);
      if ('error' in outcome) throw outcome.error;
      return outcome.response === response ? undefined : outcome.response;
    },
    async onError({ error, id, options: client }) {
      const original = pending.get(id);
      pending.delete(id);
      if (!original || nodes.length < 2) return undefined;
      const outcome = await chase(original, { error }, client.fetch);
      if ('error' in outcome) return outcome.error instanceof Error ? outcome.error : undefined;
      return outcome.response;
    },
  };
}

/** One send's result: an answer, or the failure to get one (a connection refused, a host gone). */
type Outcome = { response: Response } | { error: unknown };

interface NextSend {
  url: URL;
  waitMs: number;
  /** The node asked no longer serves the path: forget the route learnt for it. */
  lost?: boolean;
}

/** The next of `nodes` after the one `target` names (the first when it is none of them). */
function elsewhere(target: URL, nodes: string[], waitMs: number): NextSend | undefined {
  if (nodes.length < 2) return undefined;
  const next = nodes[(nodes.indexOf(target.origin) + 1) % nodes.length]!;
  return { url: new URL(target.pathname + target.search, next), waitMs, lost: true };
}

/** Where and after how long to send again, or undefined when the answer is final. */
async function nextTarget(answer: Response, target: URL, maxRetryAfterMs: number, nodes: string[]): Promise<NextSend | undefined> {
  if (answer.status === 409 && answer.headers.get('content-type')?.startsWith('application/problem+json')) {
    const problem = (await answer.clone().json()) as { type?: unknown; address?: unknown };
    if (problem.type !== NOT_OWNER || typeof problem.address !== 'string') return undefined;
    const owner = new URL(problem.address);
    // A hint naming this very node again would loop: the answer stands.
    if (owner.origin === target.origin) return undefined;
    return { url: new URL(target.pathname + target.search, owner), waitMs: 0 };
  }
  if (answer.status === 421 && answer.headers.get('content-type')?.startsWith('application/problem+json')) {
    const problem = (await answer.clone().json()) as { type?: unknown; home_urls?: unknown };
    const urls = Array.isArray(problem.home_urls) ? problem.home_urls.filter((u): u is string => typeof u === 'string') : [];
    if (problem.type !== NOT_HOME || urls.length === 0) return undefined;
    // The first member of the home the roster lists; one that answers 421 again ends the chase.
    const home = new URL(urls[0]!);
    if (home.origin === target.origin) return undefined;
    return { url: new URL(target.pathname + target.search, home), waitMs: 0 };
  }
  if (answer.status === 503 || answer.status === 429) {
    const seconds = Number(answer.headers.get('retry-after'));
    if (!Number.isFinite(seconds) || seconds < 0 || seconds * 1000 > maxRetryAfterMs) return undefined;
    if (answer.status === 503 && nodes.length >= 2 && (await problemType(answer)) === STREAM_FENCED) return elsewhere(target, nodes, seconds * 1000);
    return { url: target, waitMs: seconds * 1000 };
  }
  return undefined;
}

async function problemType(answer: Response): Promise<unknown> {
  if (!answer.headers.get('content-type')?.startsWith('application/problem+json')) return undefined;
  try {
    return ((await answer.clone().json()) as { type?: unknown }).type;
  } catch {
    return undefined; // a problem that is not JSON names no type: the answer stands as it is
  }
}
