import { request as httpRequest } from 'node:http';
import type { Timer } from '@baton/contracts/internal/clock.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { HttpPeerTransport, RAFT_HTTP_BASE } from '@baton/plugin-raft/internal/transport-http.js';
import { peerHeaders } from '../../../support/peer-auth.js';
import { listen } from './http-cluster.js';

/** Virtual time that counts the timers armed on it: each peer body being read arms its deadline. */
export class CountingClock extends VirtualClock {
  armed = 0;

  override setTimer(ms: number, fn: () => void): Timer {
    this.armed++;
    return super.setTimer(ms, fn);
  }
}

/** What a stalled sender saw of the answer to its POST. */
export interface StalledAnswer {
  status?: number;
  type?: string;
  body?: { type?: string; deadline_ms?: number };
  closed: boolean;
}

/** The start of a body, up to the point where a stalled sender stops writing. */
const BODY_STARTS = {
  messages: (cluster: string, from: string) => `{"cluster":"${cluster}","from":"${from}","messages":[{"channel":"raft","body":"`,
  requests: (cluster: string, from: string) => `{"cluster":"${cluster}","from":"${from}","message":{"channel":"raft","body":"`,
};

/**
 * A POST to `route` from `from` with a valid credential that sends its headers and the start of
 * its body, then nothing more: what a member that stalls its snapshot or forwarded proposal does.
 */
export function stalledPost(url: string, route: 'messages' | 'requests', from: string, cluster = 'c') {
  const seen: StalledAnswer = { closed: false };
  const req = httpRequest(`${url}${RAFT_HTTP_BASE}/${route}`, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': '100000', ...peerHeaders(from) },
  });
  req.on('response', (res) => {
    seen.status = res.statusCode;
    seen.type = res.headers['content-type'];
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => (seen.body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as StalledAnswer['body']));
  });
  // The server cuts the connection once it has answered: the rest of the body never goes.
  req.on('error', () => undefined);
  req.on('close', () => (seen.closed = true));
  req.write(BODY_STARTS[route](cluster, from));
  return { seen, abort: () => req.destroy() };
}

/** `transport`'s routes on a loopback server, and whole posts as a peer's transport sends them. */
export async function serveRoutes(transport: HttpPeerTransport, cluster = 'c') {
  const server = await listen();
  server.mount(transport.router());
  const post = (route: 'messages' | 'requests', from: string, body: unknown) =>
    fetch(`${server.url}${RAFT_HTTP_BASE}/${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...peerHeaders(from) },
      body: JSON.stringify(body),
    });
  return {
    url: server.url,
    /** A large message from `from`; resolves to the answer. */
    postLarge: (from: string, body: string) => post('messages', from, { cluster, from, messages: [{ channel: 'raft', body }] }),
    /** A peer request (a forwarded proposal) from `from`; resolves to the answer. */
    postRequest: (from: string, body: string) => post('requests', from, { cluster, from, message: { channel: 'raft', body } }),
    close: async () => {
      await transport.stop();
      server.server.closeAllConnections();
      await new Promise((resolve) => server.server.close(resolve));
    },
  };
}
