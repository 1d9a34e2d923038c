import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';
import { freeLoopbackPorts } from '../../../cli/local-cluster/free-ports.js';
import { PEER_MEMBER_HEADER, PEER_SECRET_HEADER } from '../../../framework/http/peer-auth.js';
import { makeTempDir } from '../../../framework/testing/temp-dir.js';
import { prepareMember, type ClusterMember } from '../../nemesis/cluster.js';
import { callJson, type CallResult } from '../../nemesis/http-json.js';
import { peerCredentials } from '../../nemesis/peer-credentials.js';
import { eventually } from '../eventually.js';

const ENTRY = fileURLToPath(new URL('../../../hosts/authority-node/main.js', import.meta.url));
const DATACENTERS = ['east', 'west', 'north'] as const;
/** A node process on a loaded machine takes seconds to load: generous, never a blind sleep. */
const READY_MS = 90_000;

export interface ProcessMember {
  id: string;
  datacenter: string;
  control: string;
  public: string;
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
  const ports = await freeLoopbackPorts(2 * DATACENTERS.length);
  const nodes = DATACENTERS.map((datacenter, i) => ({
    id: `${datacenter}-1`,
    datacenter,
    public: `http://127.0.0.1:${ports[2 * i]}`,
    control: `http://127.0.0.1:${ports[2 * i + 1]}`,
  }));
  const ids = nodes.map((n) => n.id);
  const token = randomBytes(16).toString('hex');
  const peerAuth = peerCredentials(ids);
  const roster = Object.fromEntries(nodes.map((n) => [n.datacenter, { members: { [n.id]: { public: n.public } } }]));
  const members: ProcessMember[] = [];
  for (const [i, node] of nodes.entries()) {
    const memberDir = join(dir.path, node.id);
    const member = await prepareMember({
      id: node.id,
      dir: memberDir,
      ports: [ports[2 * i], ports[2 * i + 1]],
      entryPoint: ENTRY,
      config: {
        node: {
          self: node.id,
          mode: 'ha',
          roster,
          public: { port: ports[2 * i], host: '127.0.0.1' },
          control: { port: ports[2 * i + 1], host: '127.0.0.1' },
          tokens: [{ token, principal: 'operator', scopes: ['admin:write', 'admin:read', 'authority:write'] }],
          feed: { pullIntervalMs: 50 },
          transfers: { reprobeMaxDelayMs: 200, probeTimeoutMs: 1_000, ...transfers },
        },
        dataDir: memberDir,
        consensus: { use: 'raft', options: { member: node.id, voters: ids } },
        peerAuth: peerAuth(node.id),
        log: { level: 'info', pretty: false },
      },
    });
    members.push({ ...node, member });
  }
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
      const secret = String(peerAuth('east-1').secret);
      const r = await callJson(`${byId(at).public}/availability/v1/feeds/${origin}/applied`, {
        token,
        timeoutMs: 10_000,
        headers: { [PEER_MEMBER_HEADER]: 'east-1', [PEER_SECRET_HEADER]: secret },
      });
      const a = answer(r, `applied at ${at}`);
      if (a.status !== 200) throw new Error(`applied at ${at} answered ${a.status}: ${JSON.stringify(a.body)}`);
      return a.body;
    },
    /** Resolves once every member answers and one leads. */
    async ready(): Promise<void> {
      for (const m of members) {
        await eventually(async () => (await cluster.control(m.id, 'GET', '/members', { timeoutMs: 2_000 })).status === 200, `${m.id} to answer`, READY_MS);
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
