import { callJson } from '../http-json.js';
import type { OperationLog, Outcome } from '../operation-log.js';
import type { StreamCluster } from './stream-cluster.js';

export const ADMIN_TIMEOUT_MS = 4_000;

/**
 * One admin call recorded in the history as operation `f`: ok on a 2xx, fail when it certainly
 * did nothing (connection refused, or a 400/404/409 refusal by the state machine), unknown
 * otherwise (no answer in time, a 5xx: it may still be applied).
 */
export async function recordedAdmin(
  log: OperationLog,
  client: string,
  f: string,
  input: Record<string, string>,
  c: StreamCluster,
  at: string,
  path: string,
  body: unknown = {},
): Promise<{ outcome: Outcome; body?: any }> {
  const pending = log.invoke<Record<string, string>, unknown>(client, f, { ...input, at });
  const answer = await callJson(`${c.urls[at]}${path}`, {
    method: 'POST',
    body,
    token: c.token,
    timeoutMs: ADMIN_TIMEOUT_MS,
  });
  if (answer.kind === 'refused') {
    pending.fail(answer.reason);
    return { outcome: 'fail' };
  }
  if (answer.kind === 'lost') {
    pending.unknown(answer.reason);
    return { outcome: 'unknown' };
  }
  if (answer.status < 300) {
    pending.ok(answer.body);
    return { outcome: 'ok', body: answer.body };
  }
  const detail = `${answer.status} ${answer.body?.detail ?? ''}`;
  if (answer.status === 409 || answer.status === 404 || answer.status === 400) {
    pending.fail(detail);
    return { outcome: 'fail', body: answer.body };
  }
  pending.unknown(detail);
  return { outcome: 'unknown', body: answer.body };
}

/** Every stream's owner as `at` reads the metadata (linearizable admin read), or undefined. */
export async function owners(
  c: StreamCluster,
  at: string,
): Promise<Map<string, string> | undefined> {
  const r = await callJson(`${c.urls[at]}/v1/admin/streams?limit=1000`, {
    token: c.token,
    timeoutMs: 2_000,
  });
  if (r.kind !== 'answer' || r.status !== 200) return undefined;
  return new Map(
    (r.body.streams as Array<{ stream: string; owner: string }>).map((s) => [s.stream, s.owner]),
  );
}

/** Every node's published liveness as `at` reads it, or undefined. */
export async function livenessView(
  c: StreamCluster,
  at: string,
): Promise<Record<string, string> | undefined> {
  const r = await callJson(`${c.urls[at]}/v1/admin/nodes`, { token: c.token, timeoutMs: 2_000 });
  if (r.kind !== 'answer' || r.status !== 200) return undefined;
  return Object.fromEntries(
    (r.body.nodes as Array<{ id: string; liveness: string }>).map((n) => [n.id, n.liveness]),
  );
}

/** The pending transfers as `at` reads them, or undefined. */
export async function pendingTransfers(
  c: StreamCluster,
  at: string,
): Promise<PendingTransferView[] | undefined> {
  const r = await callJson(`${c.urls[at]}/v1/admin/transfers?limit=1000`, {
    token: c.token,
    timeoutMs: 2_000,
  });
  if (r.kind !== 'answer' || r.status !== 200) return undefined;
  return r.body.transfers as PendingTransferView[];
}

export interface PendingTransferView {
  stream: string;
  source: string;
  target: string;
  epoch: number;
  /** Log index of the command that made it: with the stream, names one transfer for good. */
  since: number;
}
