import type { Clock } from '@baton/contracts';
import { childSpan, traceHeaders } from '@baton/http';
import { memberReportSchema, type MemberReport, type MemberStatus } from './schemas.js';

/** A member of the picture and where its report is asked (null: no address known). */
export interface PeerMember {
  id: string;
  address: string | null;
}

export interface GatherOptions {
  clock: Clock;
  /** The path of the member report on each peer's listener. */
  reportPath: string;
  /** The Authorization header of the request being answered, presented to each peer. */
  authorization?: string;
  /** How long a peer gets to answer before it counts as unreachable. */
  timeoutMs?: number;
  /** The cluster's own liveness verdict per member, where the variant keeps one. */
  liveness?: (id: string) => MemberStatus['liveness'];
}

/** A report is a few hundred bytes; anything far larger is not one. */
const MAX_REPORT_BYTES = 64 * 1024;
/** Members asked at once; the rest wait for a slot, so a large roster never opens hundreds of sockets. */
const MAX_CONCURRENT = 16;
const DEFAULT_TIMEOUT_MS = 1_500;

/**
 * Asks every peer for its report, in parallel (bounded), each within the timeout, and returns
 * one status per member in the given order: its report, or why there is none. The caller's own
 * credential is presented, so the picture shows only what the caller may read on every member.
 */
export async function gatherMemberStatuses(
  self: { id: string; address: string | null; report: MemberReport },
  peers: readonly PeerMember[],
  options: GatherOptions,
): Promise<MemberStatus[]> {
  const liveness = options.liveness ?? (() => null);
  const statuses = new Array<MemberStatus>(peers.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < peers.length; i = next++) statuses[i] = await statusOf(peers[i]);
  };
  const statusOf = async (peer: PeerMember): Promise<MemberStatus> => {
    const base = { id: peer.id, address: peer.address, liveness: liveness(peer.id) };
    if (peer.address === null) return { ...base, reachable: false, report: null, error: 'no address is known for this member' };
    try {
      const report = await fetchMemberReport(peer.address, options);
      if (report.id !== peer.id) {
        return { ...base, reachable: true, report: null, error: `the member at ${peer.address} says it is ${report.id}` };
      }
      return { ...base, reachable: true, report, error: null };
    } catch (error) {
      return { ...base, reachable: false, report: null, error: (error as Error).message };
    }
  };
  await Promise.all(Array.from({ length: Math.min(MAX_CONCURRENT, peers.length) }, worker));
  const own: MemberStatus = { id: self.id, address: self.address, reachable: true, liveness: liveness(self.id), report: self.report, error: null };
  return [own, ...statuses].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** GETs one peer's report with a deadline on the injected clock, bounded in size, validated. */
async function fetchMemberReport(address: string, options: GatherOptions): Promise<MemberReport> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const url = `${address.replace(/\/+$/, '')}${options.reportPath}`;
  const controller = new AbortController();
  const timer = options.clock.setTimer(timeoutMs, () => controller.abort(new Error(`no answer within ${timeoutMs} ms`)));
  try {
    const response = await childSpan('GET member report', { 'url.full': url }, () =>
      fetch(url, {
        signal: controller.signal,
        headers: { accept: 'application/json', ...traceHeaders(), ...(options.authorization ? { authorization: options.authorization } : {}) },
      }),
    );
    const text = await boundedText(response, MAX_REPORT_BYTES);
    if (!response.ok) throw new Error(`${url} answered ${response.status}${problemDetail(text)}`);
    const parsed = memberReportSchema.safeParse(JSON.parse(text));
    if (!parsed.success) throw new Error(`${url} did not answer with a member report`);
    return parsed.data;
  } catch (error) {
    if (controller.signal.aborted) throw controller.signal.reason as Error;
    throw new Error(connectionError(error));
  } finally {
    timer.cancel();
  }
}

async function boundedText(response: Response, limit: number): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new Error(`the answer is larger than ${limit} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function problemDetail(text: string): string {
  try {
    const detail = (JSON.parse(text) as { detail?: unknown }).detail;
    return typeof detail === 'string' ? `: ${detail}` : '';
  } catch {
    return '';
  }
}

function connectionError(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED') return 'connection refused';
  if (cause?.code) return cause.code;
  return (error as Error).message ?? String(error);
}
