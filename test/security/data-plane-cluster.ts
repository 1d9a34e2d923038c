import { readFileSync } from 'node:fs';
import type { ExecutionContext } from 'ava';
import { streamClusterVariant } from '@baton/cli/internal/local-cluster/local-stream-cluster.js';
import { startNodeProcesses } from '../framework/cluster/node-processes.js';
import { eventually } from '../hosts/eventually.js';
import { leaderEveryMemberFollows } from '../support/cluster-waits.js';
import { call as callOverHttp, type CallAnswer } from '../support/https-call.js';

/** Tokens every member of the attacked cluster knows besides the operator's. */
export const BILLING_TOKEN = 'billing-service-token-0123456789';
export const MALLORY_TOKEN = 'mallory-client-token-0123456789';
export const READ_ONLY_TOKEN = 'read-only-client-token-0123456789';
export const ORDERS_TOKEN = 'orders-writer-token-0123456789';

export interface MemberReport {
  id: string;
  role: string;
  leader: string | null;
  term: number;
}

/** The peak resident set of a process, in bytes (VmHWM). */
export function peakRss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmHWM:'))!;
  return Number(/(\d+)/.exec(line)![1]) * 1024;
}

/**
 * Three stream nodes as `baton up` configures them, as real processes, with a few application
 * tokens added (two writers, a reader, a writer limited to `orders-*`), a leader every member
 * follows, and calls made as the operator or as any of the applications.
 */
export async function dataPlaneCluster(t: ExecutionContext, options: { tls?: boolean } = {}) {
  const cluster = await startNodeProcesses(t, streamClusterVariant, {
    tls: options.tls,
    configure: (config) => {
      config.node.tokens.push(
        { token: BILLING_TOKEN, principal: 'billing', scopes: ['stream:append', 'stream:read'] },
        { token: MALLORY_TOKEN, principal: 'mallory', scopes: ['stream:append', 'stream:read'] },
        { token: READ_ONLY_TOKEN, principal: 'reader', scopes: ['stream:read'] },
        { token: ORDERS_TOKEN, principal: 'orders', scopes: ['stream:append:orders-*'] },
      );
    },
  });
  const operator = { authorization: `Bearer ${cluster.token}` };
  // Under TLS every call trusts the cluster CA (the test process has no NODE_EXTRA_CA_CERTS).
  const caFile = options.tls ? cluster.nodes[0].caFile : undefined;
  const call: typeof callOverHttp = (url, init = {}) => callOverHttp(url, { ...init, ...(caFile ? { caFile } : {}) });
  const urlOf = (id: string) => cluster.nodes.find((n) => n.id === id)!.url;
  const report = async (id: string): Promise<MemberReport> =>
    (await call(`${urlOf(id)}/v1/admin/cluster/member`, { headers: operator })).body as MemberReport;
  const leader = await leaderEveryMemberFollows(
    cluster.nodes.map((n) => n.id),
    report,
  );

  const append = (node: string, stream: string, body: unknown, token?: string): Promise<CallAnswer> =>
    call(`${urlOf(node)}/v1/streams/${stream}/records`, {
      method: 'POST',
      body,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
  const read = (node: string, stream: string, token?: string, query = ''): Promise<CallAnswer> =>
    call(`${urlOf(node)}/v1/streams/${stream}/records${query}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

  /** Creates `stream` on `owner` and waits until the owner takes appends (an empty producer-less append). */
  const createWritable = async (stream: string, owner: string) => {
    await eventually(async () => {
      const created = await call(`${urlOf(leader)}/v1/admin/streams`, { method: 'POST', body: { stream, node: owner }, headers: operator });
      return created.status === 201 || created.status === 200 || created.status === 409;
    }, `the create of ${stream}`, 60_000);
    await eventually(async () => (await append(owner, stream, { records: [{ body: 'opened' }] }, cluster.token)).status === 200, `${stream} to take appends`, 60_000);
  };

  /** Every stream's owner and epoch, as the admin listing shows them. */
  const owners = async (): Promise<Record<string, string>> => {
    const answer = await call(`${urlOf(leader)}/v1/admin/streams?limit=1000`, { headers: operator });
    const streams = (answer.body as { streams: { stream: string; owner: string; epoch: number }[] }).streams;
    return Object.fromEntries(streams.map((s) => [s.stream, `${s.owner}@${s.epoch}`]));
  };

  /** The liveness verdict of each node as the metadata publishes it. */
  const liveness = async (): Promise<Record<string, string>> => {
    const answer = await call(`${urlOf(leader)}/v1/admin/nodes`, { headers: operator });
    const nodes = (answer.body as { nodes: { id: string; liveness?: string }[] }).nodes;
    return Object.fromEntries(nodes.map((n) => [n.id, n.liveness ?? 'Alive']));
  };

  return { cluster, leader, urlOf, report, operator, call, append, read, createWritable, owners, liveness };
}
