import type { ExecutionContext } from 'ava';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import type { ClusterMember } from '../../nemesis/cluster.js';
import { prepareAuthorityMembers, type AuthorityMember } from '../../nemesis/authority/authority-members.js';
import { callJson, type CallResult } from '../../nemesis/http-json.js';
import { eventually } from '../eventually.js';

/** A node process on a loaded machine takes seconds to load: generous, never a blind sleep. */
const READY_MS = 90_000;

export interface ProcessMember extends AuthorityMember {
  member: ClusterMember;
}

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/**
 * Three authority host processes (hosts/authority-node/main.js), one per datacenter, voters of
 * one Raft over HTTP on their public servers, with per-member peer credentials: what
 * `baton up --variant authority` runs. Raft log, feed and audit are files under a temp dir. Every
 * process is stopped (resumed first if paused) at teardown.
 */
export async function startProcessCluster(t: ExecutionContext, transfers: Record<string, number> = {}) {
  const dir = await makeTempDir('authority-processes');
  const prepared = await prepareAuthorityMembers({
    dir: dir.path,
    count: 3,
    feed: { pullIntervalMs: 50 },
    transfers: { reprobeMaxDelayMs: 200, probeTimeoutMs: 1_000, ...transfers },
  });
  const { token, peerHeaders } = prepared;
  const members: ProcessMember[] = prepared.nodes.map((node, i) => ({ ...node, member: prepared.members[i] }));
  t.teardown(async () => {
    await Promise.all(members.map((m) => m.member.process.stop()));
    if (t.passed) await dir.remove();
    else t.log(`member logs kept under ${dir.path}`);
  });
  for (const m of members) m.member.process.start();

  const byId = (id: string) => members.find((m) => m.id === id)!;
  const answer = (r: CallResult, what: string): Answer => {
    if (r.kind !== 'answer') throw new Error(`${what}: ${r.kind} (${r.reason})`);
    return r;
  };
  const cluster = {
    members,
    token,
    byId,
    /** A control call as the operator. */
    async control(id: string, method: string, path: string, options: { body?: unknown; key?: string; timeoutMs?: number } = {}): Promise<Answer> {
      const r = await callJson(`${byId(id).control}/availability/v1${path}`, {
        method,
        body: options.body,
        token,
        timeoutMs: options.timeoutMs ?? 60_000,
        headers: options.key ? { 'idempotency-key': options.key } : undefined,
      });
      return answer(r, `${method} ${path} at ${id}`);
    },
    /** A write at `id`'s public server under `epoch`. */
    async write(id: string, operation: string, epoch: number): Promise<Answer> {
      const r = await callJson(`${byId(id).public}/availability/v1/authorities/proj/writes`, { body: { operation, epoch }, token, timeoutMs: 10_000 });
      return answer(r, `write at ${id}`);
    },
    /** How far `at` has applied `origin`'s feed, read as a peer would (the barrier probe's route). */
    async applied(at: string, origin: string): Promise<{ serial: number; incarnation: string | null }> {
      const r = await callJson(`${byId(at).public}/availability/v1/feeds/${origin}/applied`, {
        token,
        timeoutMs: 10_000,
        headers: peerHeaders('east-1'),
      });
      const a = answer(r, `applied at ${at}`);
      if (a.status !== 200) throw new Error(`applied at ${at} answered ${a.status}: ${JSON.stringify(a.body)}`);
      return a.body;
    },
    /** Resolves once every member answers and one leads. */
    async ready(): Promise<void> {
      for (const m of members) {
        const answers = eventually(async () => (await cluster.control(m.id, 'GET', '/members', { timeoutMs: 2_000 })).status === 200, `${m.id} to answer`, READY_MS);
        await m.member.process.whileRunning(answers);
      }
      await eventually(async () => typeof (await cluster.control('east-1', 'GET', '/cluster', { timeoutMs: 2_000 })).body?.leader === 'string', 'a leader', READY_MS);
    },
    /** Sets proj's home (a consensus command, retried through an election). */
    async establish(home: string): Promise<void> {
      await eventually(async () => (await cluster.control('east-1', 'POST', '/commands', { body: { type: 'transfer_authority', authority: 'proj', target: home }, timeoutMs: 10_000 })).status === 200, `proj to be homed at ${home}`, READY_MS);
    },
    async authority(id = 'east-1'): Promise<{ home: string; epoch: number }> {
      return (await cluster.control(id, 'GET', '/authorities/proj')).body;
    },
  };
  await cluster.ready();
  return cluster;
}

export type ProcessCluster = Awaited<ReturnType<typeof startProcessCluster>>;
