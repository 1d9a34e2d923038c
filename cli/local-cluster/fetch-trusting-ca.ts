import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { Agent, request } from 'node:https';
import { rootCertificates } from 'node:tls';

/**
 * A fetch that trusts the cluster CA at `caFile` besides the system's CAs, for the `baton up`
 * process itself: it was started before it generated that CA, and Node reads
 * NODE_EXTRA_CA_CERTS only at start. It carries what the CLI's calls use (method, headers, a
 * string body, an abort signal) over node:https, and fails as fetch fails: a TypeError whose
 * `cause` is the socket's error, or the signal's reason, so callers explain it the same way.
 * http:// addresses go to the global fetch. The CAs of NODE_EXTRA_CA_CERTS stay trusted as well
 * (a `ca` of its own would otherwise replace them), so `--cacert` adds to them.
 */
export function fetchTrustingCa(caFile: string): typeof fetch {
  const agent = new Agent({ keepAlive: true, ca: [...rootCertificates, ...extraCaCertificates(), readFileSync(caFile, 'utf8')] });
  return (input, init = {}) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith('https:')) return fetch(input, init);
    if (init.body !== undefined && init.body !== null && typeof init.body !== 'string') {
      return Promise.reject(new TypeError('fetchTrustingCa sends string bodies only'));
    }
    const body = init.body ?? undefined;
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const signal = init.signal ?? undefined;
    return new Promise<Response>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      const onAbort = () => {
        outgoing.destroy();
        reject(signal?.reason as Error);
      };
      const outgoing = request(url, { method: init.method ?? 'GET', headers, agent }, (incoming) => {
        readAll(incoming).then(
          (bytes) => {
            signal?.removeEventListener('abort', onAbort);
            resolve(asResponse(incoming, bytes));
          },
          (error: Error) => reject(new TypeError('fetch failed', { cause: error })),
        );
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      outgoing.on('error', (error) => {
        signal?.removeEventListener('abort', onAbort);
        reject(new TypeError('fetch failed', { cause: error }));
      });
      outgoing.end(body);
    });
  };
}

/** The certificates NODE_EXTRA_CA_CERTS names, as Node itself would have added them; none if unreadable. */
function extraCaCertificates(): string[] {
  const file = process.env.NODE_EXTRA_CA_CERTS;
  if (!file) return [];
  try {
    return [readFileSync(file, 'utf8')];
  } catch {
    return [];
  }
}

function readAll(incoming: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => resolve(Buffer.concat(chunks)));
    incoming.on('error', reject);
  });
}

/** Statuses whose Response may carry no body (the constructor refuses one). */
const NO_BODY = new Set([204, 205, 304]);

function asResponse(incoming: IncomingMessage, bytes: Buffer): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
  }
  const status = incoming.statusCode ?? 0;
  return new Response(NO_BODY.has(status) ? null : bytes, { status, statusText: incoming.statusMessage ?? '', headers });
}
