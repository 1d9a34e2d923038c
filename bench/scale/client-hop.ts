// Part "client-hop": consensus end to end with a client hop. A client process (this one) sends
// each proposal over HTTP (keep-alive) to one of three plugins/raft member processes (file
// storage, fsync; followers forward to the leader), as the hosts' APIs receive them, instead of
// the load running inside the leader as bench/consensus (b) does. Beside it, in the same run, a
// 3-member etcd cluster through its client (plain puts), and etcd's own load generator,
// `etcdctl check perf --load=xl`, against that cluster; its figure is printed beside the ratio.
// BENCH_QUICK=1: one concurrency, 1 s each, and `check perf --load=s`.
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import { benchPlainEtcd } from '../consensus/etcd-plain.js';
import { pollLeader, startMembers, stopMember, type Member } from '../consensus/http-processes.js';
import { runLoad, type LoadSummary } from '../consensus/load.js';
import type { ScaleRow } from './rows.js';

const QUICK = process.env.BENCH_QUICK === '1';
const SECONDS = QUICK ? 1 : 4;
const CONCURRENCY = QUICK ? [64] : [1, 64, 512];
const PERF_LOAD = process.env.BENCH_ETCD_PERF_LOAD ?? (QUICK ? 's' : 'xl');

function post(agent: Agent, url: string, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/bench/propose`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}: ${text}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function raftThroughClient(concurrency: number): Promise<LoadSummary> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-bench-hop-'));
  let members: Member[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  try {
    members = await startMembers(dir);
    const leader = await pollLeader(members);
    // BENCH_HOP_TARGET=leader sends everything to the leader; by default round-robin over the
    // members, as a client given every member's address would (followers forward).
    const targets = process.env.BENCH_HOP_TARGET === 'leader' ? [leader] : members;
    return await runLoad(concurrency, SECONDS, (w, n) => post(agent, targets[w % targets.length].url, JSON.stringify({ key: `k${w}`, value: String(n) })));
  } finally {
    agent.destroy();
    await Promise.all(members.map((m) => stopMember(m)));
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs `etcdctl check perf` and returns its throughput line and verdict. */
function etcdctlCheckPerf(endpoints: string[]): Promise<{ writesPerSec: number | null; verdict: string }> {
  return new Promise((resolve) => {
    const child = spawn('etcdctl', [`--endpoints=${endpoints.join(',')}`, 'check', 'perf', `--load=${PERF_LOAD}`], { env: { ...process.env, ETCDCTL_API: '3' } });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('error', (error) => resolve({ writesPerSec: null, verdict: `not run: ${error.message}` }));
    child.on('close', () => {
      // "PASS: Throughput is 150 writes/s" or "FAIL: Throughput too low: 2252 writes/s".
      const throughput = /Throughput (?:is|too low:) (\d+) writes\/s/.exec(out);
      const verdict = out.trim().split('\n').filter((l) => /^(PASS|FAIL)/.test(l)).join('; ');
      resolve({ writesPerSec: throughput ? Number(throughput[1]) : null, verdict: verdict || out.trim().slice(-200) });
    });
  });
}

export async function run(): Promise<ScaleRow[]> {
  const raft: LoadSummary[] = [];
  for (const c of CONCURRENCY) raft.push(await raftThroughClient(c));
  const etcd = await EtcdCluster.start({ size: 3, heartbeatMs: 100, electionMs: 1000, binary: process.env.ETCD_BINARY ?? '/usr/bin/etcd' });
  let plain: LoadSummary[];
  let perf: { writesPerSec: number | null; verdict: string };
  try {
    plain = await benchPlainEtcd(etcd, CONCURRENCY, SECONDS);
    perf = await etcdctlCheckPerf(etcd.endpoints);
  } finally {
    await etcd.close();
  }
  const rows: ScaleRow[] = [];
  for (const c of CONCURRENCY) {
    const r = raft.find((s) => s.concurrency === c)!;
    const e = plain.find((s) => s.concurrency === c)!;
    const ratio = e.proposalsPerSec > 0 ? Number((r.proposalsPerSec / e.proposalsPerSec).toFixed(2)) : null;
    rows.push({ part: 'client-hop', name: `raft via HTTP client, c=${c}`, concurrency: c, perSec: r.proposalsPerSec, p50Ms: r.p50Ms, p99Ms: r.p99Ms, errors: r.errors, vsEtcd: ratio, etcdctlCheckPerfWritesPerSec: perf.writesPerSec });
    rows.push({ part: 'client-hop', name: `etcd via etcd3 client, c=${c}`, concurrency: c, perSec: e.proposalsPerSec, p50Ms: e.p50Ms, p99Ms: e.p99Ms, errors: e.errors, vsEtcd: 1, etcdctlCheckPerfWritesPerSec: perf.writesPerSec });
  }
  rows.push({ part: 'client-hop', name: `etcdctl check perf --load=${PERF_LOAD}`, perSec: perf.writesPerSec, verdict: perf.verdict });
  return rows;
}
