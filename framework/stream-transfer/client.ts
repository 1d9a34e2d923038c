import { type Clock, BatonError } from '@baton/contracts';
import { SystemClock } from '@baton/kernel';
import type { StreamSummary } from './listing.js';
import type { TrailChain } from '@baton/consensus';
import type { AuditRecordView } from './audit-listing.js';
import type { PlanPreview, RebalancePage } from './rebalance-listing.js';
import type { DrainProgress, NodeStatus } from './progress.js';
import type { StreamPlacement } from './labels.js';

/** One page of `GET /v1/admin/streams`. */

/** The answer to a rebalance plan or start (the progress once started). */
export interface RebalanceAnswer extends PlanPreview {
  dryRun: boolean;
  progress?: RebalancePage;
}

export interface StreamPage {
  streams: StreamSummary[];
  /** Pass as `after` for the next page; null on the last one. */
  next: string | null;
  total: number;
}

/** A problem+json answer the client could not resolve by following hints or waiting. */
export class StreamApiError extends BatonError {
  constructor(
    readonly status: number,
    readonly problem: { type?: string; detail?: string; [member: string]: unknown },
    readonly url: string,
  ) {
    super(`stream_api_${status}`, `${url} answered ${status}: ${problem.detail ?? problem.type ?? 'no detail'}`);
  }
}

export interface StreamClientOptions {
  /** Base URLs of any nodes; the first is asked when the owner of a stream is not known yet. */
  nodes: string[];
  /** Bearer token for the admin API; presented on every call, so a wrong one is refused at once. */
  token?: string;
  /** Hops to follow per request (409 hints), and 503 waits to sit through. */
  maxRedirects?: number;
  maxUnavailableRetries?: number;
  clock?: Clock;
  fetch?: typeof fetch;
}

export interface AppendAnswer {
  stream: string;
  epoch: number;
  first: number;
  count: number;
  offsets: number[];
  duplicate: boolean;
  node: string;
}

/** What a failover answers: the node's status, the streams it moved, those it could not place. */
export interface FailoverAnswer extends DrainProgress {
  moved: number;
  remaining: number;
  duplicate: boolean;
}

export interface ReadAnswer {
  stream: string;
  from: number;
  records: { offset: number; body: string }[];
  next: number;
}

/**
 * The TypeScript client of the stream-transfer API. It remembers which node serves each stream
 * and follows 409 hints (the owner or owner-to-be, its address and epoch) without a lookup;
 * it sits through 503 + Retry-After (a handoff that takes longer than the parking window) up to
 * a bound. Appends with a producer keep their (id, seq) across every retry, so a retry after a
 * lost answer is never appended twice.
 */
/** A page of the audit trail: `next` is the `before` of the following page, null at its start. */
export interface AuditPage {
  trail: string;
  records: AuditRecordView[];
  next: string | null;
}

export class StreamClient {
  private readonly owners = new Map<string, string>();
  private readonly clock: Clock;
  private readonly fetch: typeof fetch;
  private readonly maxRedirects: number;
  private readonly maxUnavailableRetries: number;

  constructor(private readonly options: StreamClientOptions) {
    if (options.nodes.length === 0) throw new TypeError('StreamClient needs at least one node URL');
    this.clock = options.clock ?? new SystemClock();
    this.fetch = options.fetch ?? fetch;
    this.maxRedirects = options.maxRedirects ?? 5;
    this.maxUnavailableRetries = options.maxUnavailableRetries ?? 30;
  }

  append(stream: string, bodies: string[], producer?: { id: string; seq: number }): Promise<AppendAnswer> {
    return this.routed(stream, 'POST', `/v1/streams/${encodeURIComponent(stream)}/records`, {
      records: bodies.map((body) => ({ body })),
      ...(producer ? { producer } : {}),
    }) as Promise<AppendAnswer>;
  }

  /** A producer that numbers its batches, so each batch is appended at most once however often it is retried. */
  producer(id: string, firstSeq = 0): { append(stream: string, bodies: string[]): Promise<AppendAnswer> } {
    let seq = firstSeq;
    return {
      append: async (stream, bodies) => {
        const mine = seq++;
        return this.append(stream, bodies, { id, seq: mine });
      },
    };
  }

  /** With `waitSeconds`, a long poll: the node answers once a record at `from` is durable, or empty after the wait. */
  read(stream: string, from = 0, limit = 100, waitSeconds = 0): Promise<ReadAnswer> {
    const wait = waitSeconds > 0 ? `&wait=${waitSeconds}` : '';
    return this.request('GET', this.anyNode(stream), `/v1/streams/${encodeURIComponent(stream)}/records?from=${from}&limit=${limit}${wait}`) as Promise<ReadAnswer>;
  }

  describe(stream: string): Promise<Record<string, unknown>> {
    return this.request('GET', this.anyNode(stream), `/v1/streams/${encodeURIComponent(stream)}`) as Promise<Record<string, unknown>>;
  }

  /** The node this client currently believes serves `stream`. */
  ownerOf(stream: string): string | undefined {
    return this.owners.get(stream);
  }

  // ---- admin ----------------------------------------------------------------------------------

  registerNode(id: string, address: string, slots: number): Promise<{ node: NodeStatus }> {
    return this.admin('POST', '/v1/admin/nodes', { id, address, slots }) as Promise<{ node: NodeStatus }>;
  }

  /** Every registered node (the pages followed to the end). */
  async nodes(): Promise<{ nodes: NodeStatus[] }> {
    const nodes: NodeStatus[] = [];
    for await (const page of this.pages<{ nodes: NodeStatus[] }>('/v1/admin/nodes')) nodes.push(...page.nodes);
    return { nodes };
  }

  /** One page of streams by id, after the cursor `after`. */
  streams(options: { after?: string; limit?: number } = {}): Promise<StreamPage> {
    const query = new URLSearchParams();
    if (options.after) query.set('after', options.after);
    if (options.limit) query.set('limit', String(options.limit));
    const suffix = query.size > 0 ? `?${query}` : '';
    return this.admin('GET', `/v1/admin/streams${suffix}`) as Promise<StreamPage>;
  }

  /** One page of the audit trail, newest first, as the node's own audit store holds it. */
  audit(options: { subject?: string; kind?: string; before?: string; limit?: number } = {}): Promise<AuditPage> {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(options)) if (value !== undefined) query.set(name, String(value));
    const suffix = query.size > 0 ? `?${query}` : '';
    return this.admin('GET', `/v1/admin/audit${suffix}`) as Promise<AuditPage>;
  }

  auditRecord(id: string): Promise<AuditRecordView> {
    return this.admin('GET', `/v1/admin/audit/${encodeURIComponent(id)}`) as Promise<AuditRecordView>;
  }

  /** The trail's chain head and anchors, as the replicated state keeps them. */
  auditChain(): Promise<{ trail: string } & Pick<TrailChain, 'anchors'> & { head: TrailChain['head'] | null }> {
    return this.admin('GET', '/v1/admin/audit/chain') as Promise<{ trail: string; anchors: TrailChain['anchors']; head: TrailChain['head'] | null }>;
  }

  node(id: string): Promise<DrainProgress> {
    return this.admin('GET', `/v1/admin/nodes/${encodeURIComponent(id)}`) as Promise<DrainProgress>;
  }

  createStream(stream: string, node?: string, placement?: StreamPlacement): Promise<{ stream: string; owner: string; epoch: number }> {
    return this.admin('POST', '/v1/admin/streams', { stream, ...(node ? { node } : {}), ...(placement ? { placement } : {}) }) as Promise<{
      stream: string;
      owner: string;
      epoch: number;
    }>;
  }

  /** Schedules a maintenance window on `node` (drained from its start, streams back after its end at `movesPerSecond`). */
  scheduleMaintenance(node: string, window: { start?: string | number; duration: string | number; movesPerSecond?: number }): Promise<{ node: NodeStatus }> {
    return this.admin('POST', `/v1/admin/nodes/${encodeURIComponent(node)}/maintenance`, window) as Promise<{ node: NodeStatus }>;
  }

  /** Ends `node`'s maintenance window now. */
  endMaintenance(node: string): Promise<{ node: NodeStatus }> {
    return this.admin('DELETE', `/v1/admin/nodes/${encodeURIComponent(node)}/maintenance`) as Promise<{ node: NodeStatus }>;
  }

  /**
   * Proposes moving `stream` to `target`. `expectedEpoch` / `expectedOwner` make it move only
   * while the stream is still there (412 otherwise); `idempotencyKey` makes a retry answer the
   * first decision, wherever it lands.
   */
  transfer(stream: string, target: string, options: TransferGuard = {}): Promise<Record<string, unknown>> {
    const body = {
      stream,
      target,
      ...(options.expectedEpoch === undefined ? {} : { expected_epoch: options.expectedEpoch }),
      ...(options.expectedOwner === undefined ? {} : { expected_owner: options.expectedOwner }),
    };
    return this.admin('POST', '/v1/admin/transfers', body, keyHeader(options)) as Promise<Record<string, unknown>>;
  }

  /** Every pending transfer, oldest first (the pages followed to the end). */
  async transfers(): Promise<{ transfers: Record<string, unknown>[] }> {
    const transfers: Record<string, unknown>[] = [];
    for await (const page of this.pages<{ transfers: Record<string, unknown>[] }>('/v1/admin/transfers')) transfers.push(...page.transfers);
    return { transfers };
  }

  private async *pages<T extends object>(path: string): AsyncIterableIterator<T> {
    let after: string | null = null;
    do {
      const query: string = after === null ? '' : `?after=${encodeURIComponent(after)}`;
      const page = (await this.admin('GET', `${path}${query}`)) as T;
      yield page;
      after = (page as { next?: string | null }).next ?? null;
    } while (after !== null);
  }

  transferStatus(stream: string): Promise<{ status: 'pending' | 'settled'; [k: string]: unknown }> {
    return this.admin('GET', `/v1/admin/transfers/${encodeURIComponent(stream)}`) as Promise<{
      status: 'pending' | 'settled';
    }>;
  }

  /** Drains a node; with `expectedStreams`, only while it still owns that many streams (412 otherwise). */
  drain(node: string, maxInFlight?: number, options: NodeGuard = {}): Promise<DrainProgress> {
    const body = {
      ...(maxInFlight ? { maxInFlight } : {}),
      ...(options.expectedStreams === undefined ? {} : { expected_streams: options.expectedStreams }),
    };
    return this.admin(
      'POST',
      `/v1/admin/nodes/${encodeURIComponent(node)}/drain`,
      Object.keys(body).length > 0 ? body : undefined,
      keyHeader(options),
    ) as Promise<DrainProgress>;
  }

  /** Moves every stream of a lost node to live nodes (POST /v1/admin/nodes/{node}/failover). */
  failover(node: string, options: { force?: boolean } & NodeGuard = {}): Promise<FailoverAnswer> {
    const body = {
      ...(options.force ? { force: true } : {}),
      ...(options.expectedStreams === undefined ? {} : { expected_streams: options.expectedStreams }),
    };
    return this.admin(
      'POST',
      `/v1/admin/nodes/${encodeURIComponent(node)}/failover`,
      Object.keys(body).length > 0 ? body : undefined,
      keyHeader(options),
    ) as Promise<FailoverAnswer>;
  }

  /** Plans (dryRun) or starts a rebalance: the plan's size, its first moves (`truncated` when more), its effect per node. */
  rebalance(options: { dryRun?: boolean; maxInFlight?: number } = {}): Promise<RebalanceAnswer> {
    return this.admin('POST', '/v1/admin/rebalance', options) as Promise<RebalanceAnswer>;
  }

  /** The rebalance's tallies and one page of its waiting moves (GET /v1/admin/rebalance). */
  rebalanceProgress(page: { after?: string; limit?: number } = {}): Promise<RebalancePage> {
    const query = new URLSearchParams();
    if (page.after !== undefined) query.set('after', page.after);
    if (page.limit !== undefined) query.set('limit', String(page.limit));
    const suffix = query.size > 0 ? `?${query}` : '';
    return this.admin('GET', `/v1/admin/rebalance${suffix}`) as Promise<RebalancePage>;
  }

  // ---- internals ------------------------------------------------------------------------------

  /** The next configured node after `base` (itself when it is the only one). */
  private otherNode(base: string): string {
    const nodes = this.options.nodes;
    const at = nodes.indexOf(base);
    return nodes[(at + 1) % nodes.length];
  }

  private anyNode(stream: string): string {
    return this.owners.get(stream) ?? this.options.nodes[0];
  }

  /** Sends to the believed owner; follows 409 hints and waits out 503s, within bounds. */
  private async routed(stream: string, method: string, path: string, body?: unknown): Promise<unknown> {
    let base = this.anyNode(stream);
    let hops = 0;
    let waits = 0;
    for (;;) {
      let answer;
      try {
        answer = await this.send(method, base, path, body);
      } catch (error) {
        // The believed owner cannot be reached (killed, its host gone): any other node knows
        // where the stream went, or will once it is failed over.
        if (this.options.nodes.length < 2 || ++waits > this.maxUnavailableRetries) throw error;
        this.owners.delete(stream);
        base = this.otherNode(base);
        await this.clock.sleep(UNREACHABLE_RETRY_MS);
        continue;
      }
      if (answer.ok) {
        this.owners.set(stream, base);
        return answer.body;
      }
      const problem = answer.body as Record<string, unknown>;
      if (answer.status === 409 && problem.type === 'urn:baton:problem:not-owner' && typeof problem.address === 'string') {
        if (++hops > this.maxRedirects) throw new StreamApiError(answer.status, problem, base + path);
        base = problem.address;
        this.owners.set(stream, base);
        continue;
      }
      if (answer.status === 503 && ++waits <= this.maxUnavailableRetries) {
        if (problem.type === 'urn:baton:problem:stream-fenced') {
          // That node lost the stream and does not know to whom yet: any other node does.
          base = this.otherNode(base);
          this.owners.delete(stream);
        }
        await this.clock.sleep(retryAfterMs(answer.retryAfter));
        continue;
      }
      throw new StreamApiError(answer.status, problem, base + path);
    }
  }

  private async admin(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<unknown> {
    return this.request(method, this.options.nodes[0], path, body, headers);
  }

  private async request(method: string, base: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<unknown> {
    const answer = await this.send(method, base, path, body, extra);
    if (!answer.ok) throw new StreamApiError(answer.status, answer.body as Record<string, unknown>, base + path);
    return answer.body;
  }

  private async send(
    method: string,
    base: string,
    path: string,
    body?: unknown,
    extra: Record<string, string> = {},
  ): Promise<{ ok: boolean; status: number; body: unknown; retryAfter: string | null }> {
    const headers: Record<string, string> = { ...extra };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    // Sent on data calls too: a wrong token must be refused there as well, not go unnoticed.
    if (this.options.token) headers.Authorization = `Bearer ${this.options.token}`;
    const response = await this.fetch(base + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = undefined;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = { detail: text };
    }
    return { ok: response.ok, status: response.status, body: parsed ?? {}, retryAfter: response.headers.get('retry-after') };
  }
}

/** A retried admin write under this key answers the first decision (Idempotency-Key). */
export interface KeyedWrite {
  idempotencyKey?: string;
}

/** Move a stream only while it is still at this epoch and/or on this owner. */
export interface TransferGuard extends KeyedWrite {
  expectedEpoch?: number;
  expectedOwner?: string;
}

/** Drain or fail over a node only while it still owns this many streams. */
export interface NodeGuard extends KeyedWrite {
  expectedStreams?: number;
}

function keyHeader(options: KeyedWrite): Record<string, string> {
  return options.idempotencyKey === undefined ? {} : { 'Idempotency-Key': options.idempotencyKey };
}

/** The pause before asking another node when one could not be reached. */
const UNREACHABLE_RETRY_MS = 200;

function retryAfterMs(header: string | null): number {
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 30) * 1000 : 1000;
}
