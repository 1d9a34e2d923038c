import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NodeSupervisor } from './node-supervisor.js';

/** `<dataDir>/up.json`: where the running `baton up` takes `baton node` requests. */
export interface UpControlRecord {
  pid: number;
  variant: 'stream' | 'authority';
  url: string;
}

export function controlRecordPath(dataDir: string): string {
  return join(dataDir, 'up.json');
}

/**
 * The loopback listener through which `baton node list|stop|start` reaches the `baton up` that
 * owns the node processes: only that process can start a node that dies with it. Every request
 * needs the cluster's admin token; nothing is read from a request's body.
 */
export async function startControlServer(
  dataDir: string,
  variant: UpControlRecord['variant'],
  token: string,
  nodes: NodeSupervisor,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    void handle(request, response, token, nodes).catch((error: unknown) =>
      problem(response, 500, `the request failed: ${(error as Error).message}`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('control listener has no port');
  const url = `http://127.0.0.1:${address.port}`;
  await mkdir(dataDir, { recursive: true });
  const record: UpControlRecord = { pid: process.pid, variant, url };
  await writeFile(controlRecordPath(dataDir), `${JSON.stringify(record)}\n`, { mode: 0o600 });
  let closed: Promise<void> | undefined;
  return {
    url,
    close: () => (closed ??= closeServer(server).then(() => rm(controlRecordPath(dataDir), { force: true }))),
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
