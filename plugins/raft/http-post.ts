import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface PostAnswer {
  status: number;
  text: string;
}

/**
 * POSTs over node:http with kept-alive, Nagle-free connections, for peer requests (a follower
 * forwarding a proposal to the leader; one-way messages travel on streams, peer-stream-out.ts).
 * fetch (undici, web streams, transferable signals) costs about a millisecond of CPU per call;
 * a plain http.request with a keep-alive agent costs a fraction of that.
 */
export class PeerPoster {
  private readonly http = new HttpAgent({
    keepAlive: true,
    keepAliveMsecs: 10_000,
    maxSockets: 16,
  });
  private readonly https = new HttpsAgent({
    keepAlive: true,
    keepAliveMsecs: 10_000,
    maxSockets: 16,
  });

  post(
    url: string,
    body: string,
    headers: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<PostAnswer> {
    return new Promise<PostAnswer>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
        return;
      }
      const target = new URL(url);
      const secure = target.protocol === 'https:';
      const payload = Buffer.from(body, 'utf8');
      const req = (secure ? httpsRequest : httpRequest)(
        target,
        {
          method: 'POST',
          agent: secure ? this.https : this.http,
          headers: { ...headers, 'content-length': String(payload.length) },
        },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          );
          res.on('error', reject);
        },
      );
      const onAbort = () =>
        req.destroy(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('socket', (socket) => socket.setNoDelay(true));
      req.on('error', reject);
      req.on('close', () => signal?.removeEventListener('abort', onAbort));
      req.end(payload);
    });
  }

  /** Closes idle and in-flight connections (in-flight posts fail). */
  destroy(): void {
    this.http.destroy();
    this.https.destroy();
  }
}
