// Consensus benchmark: committed proposals per second and commit latency (p50/p99), with the
// same numbers of concurrent proposers, for four setups measured in one run so their ratios are
// honest on a noisy machine:
//   (a) plugins/raft, three voters in one process, memory storage, in-process transport;
//   (b) plugins/raft, three voters as three processes, HTTP on loopback, file storage (fsync);
//   (c) plain etcd, a 3-member cluster on loopback (Debian etcd), plain puts via the etcd3 client;
//   (d) plugins/etcd (EtcdConsensus), three members sharing one log in that same etcd cluster.
// Ratios compare each setup with (c) at the same concurrency.
// Run: npm run build && node dist/bench/consensus/run.js   (BENCH_QUICK=1 for a short run;
// ETCD_BINARY selects the etcd executable, default /usr/bin/etcd; BENCH_SETUPS=ac runs only
// (a) and (c)). A setup that fails is reported on stderr and the run exits 1.
// Prints a human table, then one JSON line per setup and concurrency: {"bench":"consensus", ...}.
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import { benchEtcdPlugin } from './etcd-plugin.js';
import { benchPlainEtcd } from './etcd-plain.js';
import { benchHttpProcesses } from './http-processes.js';
import { benchInProcess } from './in-process.js';
import type { LoadSummary } from './load.js';

const QUICK = process.env.BENCH_QUICK === '1';
const SECONDS = QUICK ? 1 : 4;
const CONCURRENCY = QUICK ? [64] : [1, 64, 512];

interface Row extends LoadSummary {
  bench: 'consensus';
  key: 'a' | 'b' | 'c' | 'd';
  setup: string;
}

const SETUPS = {
  a: 'raft, 1 process, memory storage',
  b: 'raft, 3 processes, HTTP, file storage',
  c: 'etcd 3 members, plain puts',
  d: 'etcd consensus plugin, 3 members',
} as const;

const rows: Row[] = [];
const add = (key: Row['key'], summaries: LoadSummary[]) => {
  for (const s of summaries) rows.push({ bench: 'consensus', key, setup: SETUPS[key], ...s });
};

// BENCH_SETUPS picks setups by letter (default all); ratios need (c).
const chosen = new Set((process.env.BENCH_SETUPS ?? 'abcd').split(''));
const failures: string[] = [];
/** A setup that fails (etcd not installed, a member that would not start) is reported, not fatal. */
const measure = async (key: Row['key'], run: () => Promise<LoadSummary[]>) => {
  if (!chosen.has(key)) return;
  try {
    add(key, await run());
  } catch (error) {
    failures.push(`(${key}) ${SETUPS[key]} failed: ${(error as Error).message}`);
  }
};

await measure('a', () => benchInProcess(CONCURRENCY, SECONDS));
await measure('b', () => benchHttpProcesses(CONCURRENCY, SECONDS));
if (chosen.has('c') || chosen.has('d')) {
  try {
    // Production etcd timings (100 ms heartbeat, 1 s election), not the short ones tests use.
    const etcd = await EtcdCluster.start({ size: 3, heartbeatMs: 100, electionMs: 1000, binary: process.env.ETCD_BINARY ?? '/usr/bin/etcd' });
    try {
      await measure('c', () => benchPlainEtcd(etcd, CONCURRENCY, SECONDS));
      await measure('d', () => benchEtcdPlugin(etcd, CONCURRENCY, SECONDS));
    } finally {
      await etcd.close();
    }
  } catch (error) {
    failures.push(`etcd could not be started, (c) and (d) not measured: ${(error as Error).message}`);
  }
}

const ratio = (key: Row['key'], concurrency: number): number | undefined => {
  const mine = rows.find((r) => r.key === key && r.concurrency === concurrency);
  const etcdRow = rows.find((r) => r.key === 'c' && r.concurrency === concurrency);
  if (!mine || !etcdRow || etcdRow.proposalsPerSec === 0) return undefined;
  return Number((mine.proposalsPerSec / etcdRow.proposalsPerSec).toFixed(2));
};

console.log('setup                                      concurrency  proposals/s   p50 ms   p99 ms  errors  vs (c)');
for (const r of rows) {
  const vs = ratio(r.key, r.concurrency);
  console.log(
    `(${r.key}) ${r.setup.padEnd(38)} ${String(r.concurrency).padStart(11)} ${String(r.proposalsPerSec).padStart(12)} ${r.p50Ms.toFixed(2).padStart(8)} ${r.p99Ms.toFixed(2).padStart(8)} ${String(r.errors).padStart(7)} ${vs === undefined ? '' : `${vs.toFixed(2)}x`.padStart(7)}`,
  );
}
for (const c of CONCURRENCY) {
  console.log(`concurrency ${c}: (b)/(c) = ${ratio('b', c) ?? 'n/a'}, (a)/(c) = ${ratio('a', c) ?? 'n/a'}, (d)/(c) = ${ratio('d', c) ?? 'n/a'}`);
}
for (const r of rows) {
  console.log(JSON.stringify({ ...r, ratioToPlainEtcd: ratio(r.key, r.concurrency) ?? null }));
}
for (const r of rows.filter((r) => r.firstError)) console.error(`(${r.key}) c=${r.concurrency}: first error: ${r.firstError}`);
for (const f of failures) console.error(f);
// The etcd client's gRPC channels can hold the event loop open; everything is closed above.
process.exit(failures.length > 0 ? 1 : 0);
