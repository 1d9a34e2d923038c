import { BearerTokens } from '@baton/http/internal/auth.js';
import { createHttpServer, type HttpServer } from '@baton/http/internal/http-server.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { createStreamApiApp } from '@baton/stream-transfer/internal/api.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { Cluster } from './cluster-fixture.js';

export const ADMIN_TOKEN = 'admin-token';
export const READER_TOKEN = 'reader-token';
/** An application's token: it may append and read, and nothing else. */
export const DATA_TOKEN = 'data-token';

export const tokens = new BearerTokens([
  { token: ADMIN_TOKEN, principal: 'operator', scopes: ['admin', 'stream:append', 'stream:read'] },
  { token: READER_TOKEN, principal: 'dashboard', scopes: ['metrics'] },
  { token: DATA_TOKEN, principal: 'app', scopes: ['stream:append', 'stream:read'] },
]);

/**
 * Stream nodes of a Cluster, each behind its real HTTP API on a loopback port, registered in
 * the metadata under that address (so 409 hints name URLs a client can follow).
 */
export class ApiCluster {
  readonly cluster: Cluster;
  readonly urls = new Map<string, string>();
  private readonly servers: HttpServer[] = [];

  constructor(cluster = new Cluster()) {
    this.cluster = cluster;
  }

  async addNode(id: string, slots = 100): Promise<string> {
    const node = await this.cluster.startNode(id);
    const clock = new SystemClock();
    const app = createStreamApiApp({ node, tokens, clock, rng: new SeededRng(id.length), logger: this.cluster.logger });
    const server = createHttpServer({ app, port: 0, clock, drainMs: 200 });
    const { url } = await server.listen();
    this.servers.push(server);
    this.urls.set(id, url);
    await this.cluster.must({ type: 'register-node', node: id, address: url, slots });
    return url;
  }

  url(id: string): string {
    return this.urls.get(id)!;
  }

  async stop(): Promise<void> {
    for (const server of this.servers) await server.stop();
    await this.cluster.stopAll();
  }
}

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

export async function call(url: string, init: RequestInit & { json?: unknown; token?: string } = {}): Promise<Answer> {
  const headers = new Headers(init.headers);
  if (init.json !== undefined) headers.set('Content-Type', 'application/json');
  if (init.token) headers.set('Authorization', `Bearer ${init.token}`);
  const response = await fetch(url, {
    ...init,
    headers,
    body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
}

/** A data API call with the application's token. */
export const dataCall = (url: string, init: RequestInit & { json?: unknown; token?: string } = {}) =>
  call(url, { token: DATA_TOKEN, ...init });

export const admin = (url: string, method: string, json?: unknown) =>
  call(url, { method, json, token: ADMIN_TOKEN });
