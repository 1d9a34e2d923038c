import type { Client, FetchResponse } from 'openapi-fetch';
import { streamNodeClient } from './clients.js';
import type { operations, paths } from './generated/stream-node.js';
import { OwnerRoutes } from './owner-routes.js';
import { StreamApiError } from './stream-api-error.js';

/** The JSON body of an operation's success answers (200, 201 or 202), as the document declares it. */
export type StreamAnswer<Op extends keyof operations> = {
  [S in keyof operations[Op]['responses']]: S extends 200 | 201 | 202
    ? operations[Op]['responses'][S] extends { content: { 'application/json': infer Body } }
      ? Body
      : never
    : never;
}[keyof operations[Op]['responses']];

export type AppendAnswer = StreamAnswer<'appendRecords'>;
export type ReadAnswer = StreamAnswer<'readRecords'>;
export type StreamPage = StreamAnswer<'listStreams'>;
export type AuditPage = StreamAnswer<'listAudit'>;
export type FailoverAnswer = StreamAnswer<'failoverNode'>;
export type RebalanceAnswer = StreamAnswer<'rebalance'>;
/** The JSON body an operation takes, as the document declares it. */
export type StreamRequestBody<Op extends keyof operations> = operations[Op] extends { requestBody?: { content: { 'application/json': infer Body } } } ? Body : never;

export interface StreamClientOptions {
  /** Base URLs of any nodes; the first is asked when the owner of a stream is not known yet. */
  nodes: string[];
  /** Bearer token; presented on every call, data calls too, so a wrong one is refused at once. */
  token?: string;
  /** Hops to follow per request (409 hints), and 503 waits to sit through. */
  maxRedirects?: number;
  maxUnavailableRetries?: number;
  /** Waits before a retry (default: a real timer). */
  sleep?: (ms: number) => Promise<void>;
  fetch?: (request: Request) => Promise<Response>;
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

/**
 * The stream-transfer API in calls a program makes: append, read, and the admin verbs, over
 * the generated client. Its middleware remembers which node serves each stream and follows 409
 * hints (the owner or owner-to-be) without a lookup, sits through 503 + Retry-After (a handoff
 * longer than the parking window), and leaves an unreachable node for another. Appends with a
 * producer keep their (id, seq) across every retry, so a retry after a lost answer is never
 * appended twice. A refusal it cannot resolve is thrown as a StreamApiError.
 */
export class StreamClient {
  private readonly routes = new OwnerRoutes();
  /** Data calls: routed to each stream's owner, chased through hints, waits and lost nodes. */
  private readonly data: Client<paths>;
  /** Admin calls: sent once to the first node, which forwards writes to the leader itself. */
  private readonly api: Client<paths>;

  constructor(private readonly options: StreamClientOptions) {
    if (options.nodes.length === 0) throw new TypeError('StreamClient needs at least one node URL');
    const common = {
      baseUrl: options.nodes[0]!,
      ...(options.token ? { token: options.token } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    };
    this.data = streamNodeClient({
      ...common,
      routes: this.routes,
      nodes: options.nodes,
      maxAttempts: 1 + (options.maxRedirects ?? 5) + (options.maxUnavailableRetries ?? 30),
      maxRetryAfterMs: MAX_RETRY_AFTER_MS,
    });
    // An admin write is keyed only when the caller says so: a key goes into the replicated
    // idempotency window and makes the node answer a replay, which is the caller's choice.
    this.api = streamNodeClient({ ...common, mintKeys: false, maxAttempts: 1 });
  }

  async append(stream: string, bodies: string[], producer?: { id: string; seq: number }): Promise<AppendAnswer> {
    const answer = await this.data.POST('/v1/streams/{stream}/records', {
      params: { path: { stream } },
      body: { records: bodies.map((body) => ({ body })), ...(producer ? { producer } : {}) },
    });
    const appended = settled(answer);
    // The node that acknowledged is the owner: the stream's next calls go straight there.
    if (answer.response.url) this.routes.set(recordsPath(stream), answer.response.url);
    return appended;
  }

  /** A producer that numbers its batches, so each batch is appended at most once however often it is retried. */
  producer(id: string, firstSeq = 0): { append(stream: string, bodies: string[]): Promise<AppendAnswer> } {
    let seq = firstSeq;
    return { append: (stream, bodies) => this.append(stream, bodies, { id, seq: seq++ }) };
  }

  /** With `waitSeconds`, a long poll: the node answers once a record at `from` is durable, or empty after the wait. */
  async read(stream: string, from = 0, limit = 100, waitSeconds = 0): Promise<ReadAnswer> {
    const query = { from, limit, ...(waitSeconds > 0 ? { wait: waitSeconds } : {}) };
    return settled(await this.data.GET('/v1/streams/{stream}/records', { params: { path: { stream }, query } }));
  }

  async describe(stream: string): Promise<StreamAnswer<'describeStream'>> {
    return settled(await this.api.GET('/v1/streams/{stream}', { params: { path: { stream } }, baseUrl: this.anyNode(stream) }));
  }

  /** The node this client currently believes serves `stream`. */
  ownerOf(stream: string): string | undefined {
    return this.routes.get(recordsPath(stream));
  }

  // ---- admin ----------------------------------------------------------------------------------

  async registerNode(id: string, address: string, slots: number): Promise<StreamAnswer<'registerNode'>> {
    return settled(await this.api.POST('/v1/admin/nodes', { body: { id, address, slots } }));
  }

  /** Every registered node (the pages followed to the end). */
  async nodes(): Promise<{ nodes: StreamAnswer<'listNodes'>['nodes'] }> {
    const nodes = await allPages(async (query) => {
      const page = settled(await this.api.GET('/v1/admin/nodes', { params: { query } }));
      return { rows: page.nodes, next: page.next };
    });
    return { nodes };
  }

  /** One page of streams by id, after the cursor `after`. */
  async streams(options: { after?: string; limit?: number } = {}): Promise<StreamPage> {
    return settled(await this.api.GET('/v1/admin/streams', { params: { query: options } }));
  }

  /** One page of the audit trail, newest first, as the node's own audit store holds it. */
  async audit(options: { subject?: string; kind?: string; before?: string; limit?: number } = {}): Promise<AuditPage> {
    return settled(await this.api.GET('/v1/admin/audit', { params: { query: options as never } }));
  }

  async auditRecord(id: string): Promise<StreamAnswer<'getAuditRecord'>> {
    return settled(await this.api.GET('/v1/admin/audit/{id}', { params: { path: { id } } }));
  }

  /** The trail's chain head and anchors, as the replicated state keeps them. */
  async auditChain(): Promise<StreamAnswer<'getAuditChain'>> {
    return settled(await this.api.GET('/v1/admin/audit/chain'));
  }

  async node(id: string): Promise<StreamAnswer<'getNode'>> {
    return settled(await this.api.GET('/v1/admin/nodes/{node}', { params: { path: { node: id } } }));
  }

  async createStream(stream: string, node?: string, placement?: StreamRequestBody<'createStream'>['placement']): Promise<StreamAnswer<'createStream'>> {
    return settled(await this.api.POST('/v1/admin/streams', { body: { stream, ...(node ? { node } : {}), ...(placement ? { placement } : {}) } }));
  }

  /** Schedules a maintenance window on `node` (drained from its start, streams back after its end at `movesPerSecond`). */
  async scheduleMaintenance(node: string, window: StreamRequestBody<'scheduleMaintenance'>): Promise<StreamAnswer<'scheduleMaintenance'>> {
    return settled(await this.api.POST('/v1/admin/nodes/{node}/maintenance', { params: { path: { node } }, body: window }));
  }

  /** Ends `node`'s maintenance window now. */
  async endMaintenance(node: string): Promise<StreamAnswer<'endMaintenance'>> {
    return settled(await this.api.DELETE('/v1/admin/nodes/{node}/maintenance', { params: { path: { node } } }));
  }

  /**
   * Proposes moving `stream` to `target`. `expectedEpoch` / `expectedOwner` make it move only
   * while the stream is still there (412 otherwise); `idempotencyKey` makes a retry answer the
   * first decision, wherever it lands.
   */
  async transfer(stream: string, target: string, options: TransferGuard = {}): Promise<StreamAnswer<'transferStream'>> {
    const body = {
      stream,
      target,
      ...(options.expectedEpoch === undefined ? {} : { expected_epoch: options.expectedEpoch }),
      ...(options.expectedOwner === undefined ? {} : { expected_owner: options.expectedOwner }),
    };
    return settled(await this.api.POST('/v1/admin/transfers', { body, headers: keyHeader(options) }));
  }

  /** Every pending transfer, oldest first (the pages followed to the end). */
  async transfers(): Promise<{ transfers: StreamAnswer<'listTransfers'>['transfers'] }> {
    const transfers = await allPages(async (query) => {
      const page = settled(await this.api.GET('/v1/admin/transfers', { params: { query } }));
      return { rows: page.transfers, next: page.next };
    });
    return { transfers };
  }

  async transferStatus(stream: string): Promise<StreamAnswer<'getTransfer'>> {
    return settled(await this.api.GET('/v1/admin/transfers/{stream}', { params: { path: { stream } } }));
  }

  /** Drains a node; with `expectedStreams`, only while it still owns that many streams (412 otherwise). */
  async drain(node: string, maxInFlight?: number, options: NodeGuard = {}): Promise<StreamAnswer<'drainNode'>> {
    const body = {
      ...(maxInFlight ? { maxInFlight } : {}),
      ...(options.expectedStreams === undefined ? {} : { expected_streams: options.expectedStreams }),
    };
    const init = { params: { path: { node } }, headers: keyHeader(options), ...(Object.keys(body).length > 0 ? { body } : {}) };
    return settled(await this.api.POST('/v1/admin/nodes/{node}/drain', init));
  }

  /** Moves every stream of a lost node to live nodes (POST /v1/admin/nodes/{node}/failover). */
  async failover(node: string, options: { force?: boolean } & NodeGuard = {}): Promise<FailoverAnswer> {
    const body = {
      ...(options.force ? { force: true } : {}),
      ...(options.expectedStreams === undefined ? {} : { expected_streams: options.expectedStreams }),
    };
    const init = { params: { path: { node } }, headers: keyHeader(options), ...(Object.keys(body).length > 0 ? { body } : {}) };
    return settled(await this.api.POST('/v1/admin/nodes/{node}/failover', init));
  }

  /** Plans (dryRun) or starts a rebalance: the plan's size, its first moves (`truncated` when more), its effect per node. */
  async rebalance(options: { dryRun?: boolean; maxInFlight?: number } = {}): Promise<RebalanceAnswer> {
    return settled(await this.api.POST('/v1/admin/rebalance', { body: options }));
  }

  /** The rebalance's tallies and one page of its waiting moves (GET /v1/admin/rebalance). */
  async rebalanceProgress(page: { after?: string; limit?: number } = {}): Promise<StreamAnswer<'getRebalance'>> {
    return settled(await this.api.GET('/v1/admin/rebalance', { params: { query: page } }));
  }

  private anyNode(stream: string): string {
    return this.ownerOf(stream) ?? this.options.nodes[0]!;
  }
}

/** Longest Retry-After sat through: a node asks for at most a few seconds, a handoff settles within them. */
const MAX_RETRY_AFTER_MS = 30_000;

/** Every row of a listing, its pages followed to the end (`next` is the `after` of the page that follows). */
async function allPages<Row>(page: (query: { after?: string }) => Promise<{ rows: Row[]; next?: string | null }>): Promise<Row[]> {
  const rows: Row[] = [];
  let after: string | null = null;
  do {
    const answer: { rows: Row[]; next?: string | null } = await page(after === null ? {} : { after });
    rows.push(...answer.rows);
    after = answer.next ?? null;
  } while (after !== null);
  return rows;
}

function recordsPath(stream: string): string {
  return `/v1/streams/${encodeURIComponent(stream)}/records`;
}

function keyHeader(options: KeyedWrite): Record<string, string> {
  return options.idempotencyKey === undefined ? {} : { 'Idempotency-Key': options.idempotencyKey };
}

/** The answer's body, or the refusal the middleware could not resolve, thrown. */
function settled<T extends Record<string | number, unknown>, O, M extends `${string}/${string}`>(answer: FetchResponse<T, O, M>): NonNullable<FetchResponse<T, O, M>['data']> {
  if (answer.response.ok && answer.data !== undefined) return answer.data as NonNullable<FetchResponse<T, O, M>['data']>;
  const problem = (answer.error && typeof answer.error === 'object' ? answer.error : {}) as Record<string, unknown>;
  throw new StreamApiError(answer.response.status, problem, answer.response.url);
}
