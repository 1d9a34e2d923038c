// Store benchmark: puts and gets per second, with p50/p99 latency, for every ObjectStore
// (memory, fs, S3 over an in-process s3rver) at the same payload sizes, and every AuditStore
// (memory, fs, Redis on a spawned redis-server) with the same records, in one run.
// Run: npm run build && node dist/bench/stores/run.js   (BENCH_QUICK=1 for a short run)
// Prints a human table, then one JSON line per benchmark: {"bench":"stores", ...}.
import { performance } from 'node:perf_hooks';
import type { AuditRecord, AuditStore } from '@baton/contracts/internal/audit-store.js';
import type { ObjectStore } from '@baton/contracts/internal/object-store.js';
import { createSilentLogger } from '@baton/plugin-pino/internal/pino-logger.js';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import { auditRecord } from '@baton/conformance/internal/audit-store-suite.js';
import { RedisServer } from '@baton/conformance/internal/servers/redis-server.js';
import { S3Server, S3_TEST_CREDENTIALS } from '@baton/testing/internal/s3-server.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { FsAuditStore, FsObjectStore } from '@baton/plugin-fs/internal/index.js';
import { MemoryAuditStore, MemoryObjectStore } from '@baton/plugin-memory/internal/index.js';
import { s3ObjectStoreOptions } from '@baton/plugin-minio/internal/options.js';
import { S3ObjectStore } from '@baton/plugin-minio/internal/s3-object-store.js';
import { redisAuditStoreOptions } from '@baton/plugin-redis/internal/options.js';
import { RedisAuditStore } from '@baton/plugin-redis/internal/redis-audit-store.js';

const QUICK = process.env.BENCH_QUICK === '1';
/** Payload sizes and how many operations of each: enough for a stable p99, not a long wait. */
const PAYLOADS = [
  { bytes: 1024, ops: QUICK ? 100 : 1_000 },
  { bytes: 64 * 1024, ops: QUICK ? 50 : 300 },
  { bytes: 1024 * 1024, ops: QUICK ? 10 : 50 },
];
const AUDIT_OPS = QUICK ? 200 : 2_000;

interface Result {
  bench: 'stores';
  contract: 'ObjectStore' | 'AuditStore';
  store: string;
  op: string;
  payloadBytes: number;
  ops: number;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

/** Runs `op` `count` times, one after the other, timing each. */
async function measure(count: number, op: (i: number) => Promise<unknown>) {
  const latencies: number[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await op(i);
    latencies.push(performance.now() - t0);
  }
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return { opsPerSec: round(count / seconds), p50Ms: round(at(0.5)), p99Ms: round(at(0.99)) };
}

async function benchObjectStore(name: string, store: ObjectStore): Promise<Result[]> {
  const results: Result[] = [];
  for (const { bytes, ops } of PAYLOADS) {
    const payload = new Uint8Array(bytes).map((_, i) => (i * 131) & 0xff);
    const key = (i: number) => `bench/${bytes}/${String(i).padStart(6, '0')}`;
    const put = await measure(ops, (i) => store.put(key(i), payload));
    const get = await measure(ops, async (i) => {
      const back = await store.get(key(i));
      if (back?.byteLength !== bytes)
        throw new Error(`${name}: ${key(i)} came back with ${back?.byteLength} bytes`);
    });
    for (const [op, m] of [
      ['put', put],
      ['get', get],
    ] as const) {
      results.push({
        bench: 'stores',
        contract: 'ObjectStore',
        store: name,
        op,
        payloadBytes: bytes,
        ops,
        ...m,
      });
    }
  }
  return results;
}

async function benchAuditStore(name: string, store: AuditStore): Promise<Result[]> {
  const record = (i: number): AuditRecord =>
    auditRecord({
      id: `bench-${i}`,
      authority: `pkg-${i % 50}`,
      commit_index: i + 1,
      epoch: i + 1,
    });
  const bytes = Buffer.byteLength(JSON.stringify(record(0)));
  const put = await measure(AUDIT_OPS, (i) => store.put(record(i)));
  const byId = await measure(AUDIT_OPS, async (i) => {
    if (!(await store.byId(`bench-${i}`))) throw new Error(`${name}: bench-${i} is missing`);
  });
  const latest = await measure(AUDIT_OPS, (i) => store.latest(`pkg-${i % 50}`));
  return [
    ['put', put],
    ['byId', byId],
    ['latest', latest],
  ].map(([op, m]) => ({
    bench: 'stores' as const,
    contract: 'AuditStore' as const,
    store: name,
    op: op as string,
    payloadBytes: bytes,
    ops: AUDIT_OPS,
    ...(m as Awaited<ReturnType<typeof measure>>),
  }));
}

function table(results: Result[]): string {
  const header = ['contract', 'store', 'op', 'payload', 'ops', 'ops/s', 'p50 ms', 'p99 ms'];
  const rows = results.map((r) => [
    r.contract,
    r.store,
    r.op,
    r.payloadBytes >= 1024 ? `${r.payloadBytes / 1024} KiB` : `${r.payloadBytes} B`,
    String(r.ops),
    r.opsPerSec.toFixed(0),
    r.p50Ms.toFixed(3),
    r.p99Ms.toFixed(3),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i >= 4 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const results: Result[] = [];
  const cleanups: (() => Promise<unknown> | void)[] = [];
  try {
    results.push(...(await benchObjectStore('memory', new MemoryObjectStore())));

    const fsDir = await makeTempDir('bench-fs-objects');
    cleanups.push(() => fsDir.remove());
    const fsObjects = new FsObjectStore({ dir: fsDir.path });
    await fsObjects.start();
    results.push(...(await benchObjectStore('fs', fsObjects)));

    const s3 = await S3Server.start();
    cleanups.push(() => s3.close());
    const s3Store = new S3ObjectStore(
      s3ObjectStoreOptions.parse({
        endpoint: s3.endpoint,
        ...S3_TEST_CREDENTIALS,
        bucket: 'bench',
        createBucket: true,
        serverSortsListings: false,
      }),
      new SystemClock(),
      new SeededRng(1),
      createSilentLogger(),
    );
    await s3Store.start();
    cleanups.push(() => s3Store.stop());
    results.push(...(await benchObjectStore('s3 (s3rver)', s3Store)));

    results.push(...(await benchAuditStore('memory', new MemoryAuditStore())));

    const fsAuditDir = await makeTempDir('bench-fs-audit');
    cleanups.push(() => fsAuditDir.remove());
    const fsAudit = new FsAuditStore({ dir: fsAuditDir.path });
    await fsAudit.start();
    results.push(...(await benchAuditStore('fs', fsAudit)));

    const redis = await RedisServer.start();
    cleanups.push(() => redis.close());
    const redisStore = new RedisAuditStore(
      redisAuditStoreOptions.parse({ url: redis.url, keyPrefix: 'bench:' }),
      createSilentLogger(),
    );
    await redisStore.start();
    cleanups.push(() => redisStore.stop());
    results.push(...(await benchAuditStore('redis (fsync always)', redisStore)));
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
  console.log(table(results));
  console.log();
  for (const result of results) console.log(JSON.stringify(result));
}

await main();
