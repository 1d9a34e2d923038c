import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface CallAnswer {
  status: number;
  /** The parsed JSON body, or the text when it is not JSON. */
  body: unknown;
  type: string | null;
  headers?: Record<string, string | string[] | undefined>;
}

/** The problem type of an answer without its URN prefix (`json-limits`), when it is problem+json. */
export function problemTypeOf(answer: CallAnswer): string | undefined {
  const type = (answer.body as { type?: unknown } | undefined)?.type;
  return answer.type === 'application/problem+json' && typeof type === 'string' ? type.replace('urn:baton:problem:', '') : undefined;
}

/**
 * One HTTP(S) exchange over node:http(s), trusting `caFile` for https (the test process has no
 * NODE_EXTRA_CA_CERTS, so fetch would not trust a cluster CA).
 */
export function call(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown; rawBody?: string; caFile?: string } = {},
): Promise<CallAnswer> {
  return new Promise((resolve, reject) => {
    const secure = url.startsWith('https:');
    const payload = options.rawBody !== undefined ? Buffer.from(options.rawBody) : options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    const headers: Record<string, string> = { ...options.headers };
    if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(payload.length) });
    const req = (secure ? httpsRequest : httpRequest)(
      url,
      { method: options.method ?? 'GET', headers, agent: false, ...(secure && options.caFile ? { ca: readFileSync(options.caFile) } : {}) },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = text === '' ? undefined : JSON.parse(text);
          } catch {
            // Not JSON: keep the text.
          }
          resolve({ status: res.statusCode ?? 0, body, type: res.headers['content-type'] ?? null, headers: res.headers });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
