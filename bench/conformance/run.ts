// Linearizability checker benchmark: the histories a Jepsen-style run of a replicated register
// produces when an election falls in a burst of writes (one key, 38 concurrent writes, some
// lost, then a read), decided with the read as answered, falsified to a value never written,
// and falsified to an overwritten value. Per case, over 8 seeded histories: milliseconds and
// search steps (steps are the same on every machine; milliseconds are not).
// Run: npm run build && node --conditions=baton-internal dist/bench/conformance/run.js
// Prints a human table, then one JSON line per case: {"bench":"conformance", ...}.
import { performance } from 'node:perf_hooks';
import { checkLinearizability } from '@baton/conformance/internal/linearizability/checker.js';
import { kvRegisterModel } from '@baton/conformance/internal/linearizability/kv-register-model.js';
import {
  concurrentWritesHistory,
  withFinalRead,
  type Op,
} from '../../test/framework/conformance/linearizability/concurrent-writes-history.js';

const WRITES = 38;
const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];
const BUDGET = { maxStepsPerPartition: 5_000_000 };

interface Result {
  bench: 'conformance';
  check: 'linearizability';
  case: string;
  writes: number;
  lost: number;
  histories: number;
  outcomes: string;
  medianMs: number;
  maxMs: number;
  medianSteps: number;
  maxSteps: number;
}

type Case = {
  name: string;
  bare?: boolean;
  read: (h: ReturnType<typeof concurrentWritesHistory>) => Op[];
};
const cases: Case[] = [
  { name: 'read of the final value', read: (h) => h.history },
  { name: 'read of a value never written', read: (h) => withFinalRead(h.history, 'never-written') },
  { name: 'read of an overwritten value', read: (h) => withFinalRead(h.history, h.overwritten) },
  {
    name: 'plain writes, read of the first',
    bare: true,
    read: (h) => withFinalRead(h.history, 'v0'),
  },
];

function measure(c: Case, lost: number): Result {
  const ms: number[] = [];
  const steps: number[] = [];
  const outcomes = new Map<string, number>();
  for (const seed of SEEDS) {
    const history = c.read(concurrentWritesHistory({ writes: WRITES, lost, seed, bare: c.bare }));
    const started = performance.now();
    const result = checkLinearizability(kvRegisterModel, history, BUDGET);
    ms.push(performance.now() - started);
    steps.push(result.steps);
    outcomes.set(result.outcome, (outcomes.get(result.outcome) ?? 0) + 1);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    bench: 'conformance',
    check: 'linearizability',
    case: c.name,
    writes: WRITES,
    lost,
    histories: SEEDS.length,
    outcomes: [...outcomes].map(([o, n]) => `${o} ${n}`).join(', '),
    medianMs: round(median(ms)),
    maxMs: round(Math.max(...ms)),
    medianSteps: median(steps),
    maxSteps: Math.max(...steps),
  };
}

function table(results: Result[]): string {
  const header = ['case', 'lost', 'outcomes', 'median ms', 'max ms', 'median steps', 'max steps'];
  const rows = results.map((r) => [
    r.case,
    String(r.lost),
    r.outcomes,
    r.medianMs.toFixed(2),
    r.maxMs.toFixed(2),
    r.medianSteps.toLocaleString('en-US'),
    r.maxSteps.toLocaleString('en-US'),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  return [header, ...rows]
    .map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join('  '))
    .join('\n');
}

// One pass first, so the JIT has compiled the search before anything is timed.
for (const c of cases) measure(c, 12);
const results = cases.flatMap((c) => [0, 12, 24].map((lost) => measure(c, lost)));
console.log(table(results));
console.log();
for (const result of results) console.log(JSON.stringify(result));
