import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { join } from 'node:path';
import { readTlsMaterial } from '@baton/http';
import { durableFiles } from '@baton/kernel';
import type { ControlListenerTls } from './cluster-tls.js';
import type { NodeSupervisor } from './node-supervisor.js';
import { writePrivateFile } from './private-files.js';

/** `<dataDir>/up.json`: where the running `baton up` takes `baton node` requests. */
export interface UpControlRecord {
  pid: number;
  variant: 'stream' | 'authority';
  /** `https://` when the cluster serves TLS, `http://` otherwise. */
  url: string;
  /** The cluster CA a client trusts the listener by; present exactly when `url` is https. */
  caFile?: string;
}

export function controlRecordPath(dataDir: string): string {
  return join(dataDir, 'up.json');
}

/**
 * The loopback listener through which `baton node list|stop|start` reaches the `baton up` that
 * owns the node processes: only that process can start a node that dies with it. Every request
 * needs the cluster's admin token; nothing is read from a request's body. With `tls` (a cluster
 * started with --tls) it serves HTTPS only, so that token is never sent in clear: a plain-HTTP
 * client fails its handshake and reaches no handler.
 */
export async function startControlServer(
  dataDir: string,
  variant: UpControlRecord['variant'],
  token: string,
  nodes: NodeSupervisor,
  tls?: ControlListenerTls,
): Promise<{ url: string; close(): Promise<void> }> {
  const answer = (request: IncomingMessage, response: ServerResponse) => {
    void handle(request, response, token, nodes).catch((error: unknown) =>
      problem(response, 500, `the request failed: ${(error as Error).message}`),
    );
  };
  const server: Server = tls
    ? createTlsServer(readTlsMaterial(tls.certificate, 'baton up control'), answer)
    : createServer(answer);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('control listener has no port');
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${address.port}`;
  const record: UpControlRecord = { pid: process.pid, variant, url, ...(tls ? { caFile: tls.caFile } : {}) };
  await writePrivateFile(controlRecordPath(dataDir), `${JSON.stringify(record)}\n`);
  let closed: Promise<void> | undefined;
  return {
    url,
    close: () => (closed ??= closeServer(server).then(() => durableFiles.remove(controlRecordPath(dataDir)).then(() => undefined))),
  };
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  token: string,
  nodes: NodeSupervisor,
): Promise<void> {
  if (!authorized(request.headers.authorization, token)) {
    return problem(response, 401, 'give the cluster admin token (cluster.json) as a bearer token');
  }
  const path = new URL(request.url ?? '/', 'http://local').pathname;
  if (request.method === 'GET' && path === '/nodes') return json(response, 200, { nodes: nodes.states() });
  const match = /^\/nodes\/([^/]+)\/(stop|start)$/.exec(path);
  if (!match || request.method !== 'POST') return problem(response, 404, `no such request: ${request.method} ${path}`);
  const id = decodeURIComponent(match[1]);
  if (!nodes.has(id)) return problem(response, 404, `no node ${id}: the nodes are ${nodes.ids.join(', ')}`);
  if (match[2] === 'stop') {
    await nodes.stop(id);
  } else {
    const outcome = await nodes.start(id);
    if (!outcome.ok) return problem(response, 409, `node ${id} did not start: ${outcome.cause}`);
  }
  return json(response, 200, { node: nodes.states().find((state) => state.id === id) });
}

function authorized(header: string | undefined, token: string): boolean {
  const given = Buffer.from(/^Bearer (.+)$/.exec(header ?? '')?.[1] ?? '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function problem(response: ServerResponse, status: number, detail: string): void {
  response
    .writeHead(status, { 'content-type': 'application/problem+json' })
    .end(JSON.stringify({ type: 'about:blank', status, detail }));
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
