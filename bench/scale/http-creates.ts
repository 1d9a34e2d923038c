// Part "http-creates": a `baton up` stream cluster (three node processes, Raft over HTTP, file
// storage, as startLocalStreamCluster writes and starts it), and N stream creates through the
// admin API at concurrency 64, spread over the nodes (followers forward to the leader). Reported:
// creates/s of the first and the last 10,000 (goal: last >= 0.7x first), the Raft term before
// and after as /metrics shows it on every node, how many times the highest term changed
// (sampled every 250 ms), and the slowest create. BENCH_SCALE_CREATES sets N (default 100,000);
// every node is first registered again with N slots, so no create is refused for want of room.
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startLocalStreamCluster } from '@baton/cli/internal/local-cluster/local-stream-cluster.js';
import { percentile, type ScaleRow } from './rows.js';

const CONCURRENCY = 64;
const WINDOW = 10_000;

function call(agent: Agent, url: string, method: string, token: string, body?: unknown): Promise<{ status: number; text: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method,
      agent,
      headers: { authorization: `Bearer ${token}`, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function highestTerm(agent: Agent, urls: string[], token: string): Promise<number> {
  let term = 0;
  for (const url of urls) {
    try {
      const { text } = await call(agent, `${url}/metrics`, 'GET', token);
      const m = /^baton_consensus_term(?:\{[^}]*\})? (\d+)$/m.exec(text);
      if (m) term = Math.max(term, Number(m[1]));
    } catch {
      /* a node busy or down: the others answer */
    }
  }
  return term;
}

export async function run(): Promise<ScaleRow[]> {
  const n = Number(process.env.BENCH_SCALE_CREATES ?? 100_000);
  const dataDir = await mkdtemp(join(tmpdir(), 'baton-bench-creates-'));
  const cluster = await startLocalStreamCluster({ dataDir });
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY + 8 });
  const urls = cluster.nodes.map((node) => node.url);
  const token = cluster.record.token;
  try {
    // Room for every create: each node registered again with N slots (its config has far fewer).
    const listed = await call(agent, `${urls[0]}/v1/admin/nodes`, 'GET', token);
    for (const node of (JSON.parse(listed.text) as { nodes: { id: string; address: string }[] }).nodes) {
      const answer = await call(agent, `${urls[0]}/v1/admin/nodes`, 'POST', token, { id: node.id, address: node.address, slots: n });
      if (answer.status !== 200 && answer.status !== 201) throw new Error(`registering ${node.id} with ${n} slots: HTTP ${answer.status} ${answer.text.slice(0, 200)}`);
    }
    const termBefore = await highestTerm(agent, urls, token);
    let termChanges = 0;
    let lastTerm = termBefore;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const term = await highestTerm(agent, urls, token);
        if (term > lastTerm) {
          termChanges++;
          lastTerm = term;
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    const doneAt: number[] = new Array(n);
    const latencies: number[] = [];
    let errors = 0;
    let firstError: string | undefined;
    let next = 0;
    const started = performance.now();
    const worker = async (w: number) => {
      for (let i = next++; i < n; i = next++) {
        const t0 = performance.now();
        const { status, text } = await call(agent, `${urls[w % urls.length]}/v1/admin/streams`, 'POST', token, { stream: `bench-stream-${i}` });
        const t1 = performance.now();
        if (status !== 201 && status !== 200) {
          errors++;
          firstError ??= `HTTP ${status}: ${text.slice(0, 200)}`;
        }
        latencies.push(t1 - t0);
        doneAt[i] = t1;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)));
    const elapsed = (performance.now() - started) / 1000;
    sampling = false;
    await sampler;
    const termAfter = await highestTerm(agent, urls, token);
    const finished = doneAt.slice().sort((a, b) => a - b);
    const window = Math.min(WINDOW, Math.floor(n / 2));
    const rate = (from: number, to: number) => Math.round(window / ((finished[to] - finished[from]) / 1000));
    latencies.sort((a, b) => a - b);
    const first = rate(0, window - 1);
    const last = rate(n - window, n - 1);
    return [
      {
        part: 'http-creates',
        name: `${n.toLocaleString('en-US')} creates, c=${CONCURRENCY}, 3 processes`,
        creates: n,
        errors,
        seconds: Number(elapsed.toFixed(1)),
        createsPerSec: Math.round(n / elapsed),
        [`first${window}PerSec`]: first,
        [`last${window}PerSec`]: last,
        lastOverFirst: Number((last / first).toFixed(2)),
        p50Ms: Number(percentile(latencies, 50).toFixed(1)),
        p99Ms: Number(percentile(latencies, 99).toFixed(1)),
        maxMs: Number(latencies[latencies.length - 1].toFixed(1)),
        termBefore,
        termAfter,
        termChanges,
        ...(firstError ? { firstError } : {}),
      },
    ];
  } finally {
    agent.destroy();
    await cluster.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
