// Scale benchmarks (metadata at a million streams and a million authorities). Each part returns
// rows; this prints a table per part and one JSON line per row: {"bench":"scale","part":...}.
// Run: npm run build && node --expose-gc dist/bench/scale/run.js
//   BENCH_SCALE=snapshot,consensus-in-process   parts to run (default: every part below)
//   BENCH_SCALE_N=100000                         the largest size (default 1,000,000)
// Parts: apply-stream.ts (apply cost per command type at 1k..1M on the state machines alone, heap
// per stream and per authority), snapshot.ts (size, capture and longest event-loop block taking and installing one),
// consensus-in-process.ts (three in-process members create N streams and N authorities: the
// term must never change), client-hop.ts (proposals over HTTP to a member beside etcd through
// its client, and etcd's own `etcdctl check perf`), http-creates.ts (a `baton up` stream cluster,
// 100,000 creates through the admin API at concurrency 64: rate first vs last, term changes).
// keyed-proposals.ts (what an idempotency key costs). A part that fails is reported and the run
// exits 1.
import { printTable, type ScaleRow } from './rows.js';

type Part = () => Promise<ScaleRow[]>;
const parts: Record<string, () => Promise<Part>> = {
  apply: async () => (await import('./apply-stream.js')).run,
  snapshot: async () => (await import('./snapshot.js')).run,
  'consensus-in-process': async () => (await import('./consensus-in-process.js')).run,
  'client-hop': async () => (await import('./client-hop.js')).run,
  'http-creates': async () => (await import('./http-creates.js')).run,
  'keyed-proposals': async () => (await import('./keyed-proposals.js')).run,
};

const asked = (process.env.BENCH_SCALE ?? Object.keys(parts).join(',')).split(',').filter(Boolean);
const unknown = asked.filter((p) => !(p in parts));
if (unknown.length > 0) {
  console.error(`unknown part(s): ${unknown.join(', ')}; available: ${Object.keys(parts).join(', ')}`);
  process.exit(2);
}
let failed = 0;
for (const name of asked) {
  try {
    const rows = await (await parts[name]())();
    printTable(name, rows);
    for (const r of rows) console.log(JSON.stringify({ bench: 'scale', ...r }));
  } catch (error) {
    failed++;
    console.error(`part ${name} failed: ${(error as Error).stack ?? error}`);
  }
}
process.exit(failed > 0 ? 1 : 0);
