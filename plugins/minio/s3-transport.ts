import http from 'node:http';
import https from 'node:https';
import { SocketTimeoutError } from './s3-errors.js';

/** The HTTP side of the S3 client: one keep-alive agent per store, and silent sockets abandoned. */
export interface S3Transport {
  agent: http.Agent;
  transport: { request: typeof http.request };
  close(): void;
}

/**
 * Status codes the minio client turns into a bare "Retryable HTTP status" error without reading
 * the body; the body is drained here so the socket returns to the pool instead of leaking.
 */
const UNREAD_STATUSES = new Set([408, 429, 499, 500, 502, 503, 504, 520]);

export interface TlsSettings {
  /** PEM certificate authorities to trust instead of the system ones (a private MinIO). */
  ca?: string;
  rejectUnauthorized: boolean;
}

export function createS3Transport(
  endpoint: URL,
  socketTimeoutMs: number,
  tls: TlsSettings,
): S3Transport {
  const secure = endpoint.protocol === 'https:';
  const agent = secure
    ? new https.Agent({ keepAlive: true, ca: tls.ca, rejectUnauthorized: tls.rejectUnauthorized })
    : new http.Agent({ keepAlive: true });
  const base = secure ? https.request : http.request;
  const request = ((
    options: http.RequestOptions,
    callback?: (response: http.IncomingMessage) => void,
  ) => {
    const req = base({ ...options, agent }, (response) => {
      if (response.statusCode !== undefined && UNREAD_STATUSES.has(response.statusCode))
        response.resume();
      callback?.(response);
    });
    // An idle-socket deadline, not a total one: a large upload may take long but never sits silent.
    // The socket's own inactivity timer, armed by Node on real I/O: there is no virtual time to
    // follow on a real connection. // clock-ok
    req.setTimeout(socketTimeoutMs, () => req.destroy(new SocketTimeoutError(socketTimeoutMs))); // clock-ok
    return req;
  }) as typeof http.request;
  return { agent, transport: { request }, close: () => agent.destroy() };
}
