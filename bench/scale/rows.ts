// The rows every bench/scale part returns: one JSON line each, and one human table per part.
import { monitorEventLoopDelay, PerformanceObserver, type IntervalHistogram } from 'node:perf_hooks';

export interface ScaleRow {
  part: string;
  name: string;
  [figure: string]: string | number | boolean | null | undefined;
}

/** Sizes to measure: BENCH_SCALE_N (largest, default 1,000,000) and, for sweeps, 1k up to it. */
export function largestSize(): number {
  return Number(process.env.BENCH_SCALE_N ?? 1_000_000);
}

export function sweepSizes(): number[] {
  return [1_000, 10_000, 100_000, 1_000_000].filter((n) => n <= largestSize());
}

/** Prints the rows of one part as a table (columns: every figure any row has). */
export function printTable(title: string, rows: ScaleRow[]): void {
  console.log(`\n--- ${title}`);
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))].filter((c) => c !== 'part');
  const cell = (v: unknown) => (v === undefined || v === null ? '' : typeof v === 'number' ? format(v) : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  console.log(columns.map((c, i) => c.padEnd(widths[i])).join('  '));
  for (const r of rows) console.log(columns.map((c, i) => cell(r[c]).padEnd(widths[i])).join('  '));
}

function format(v: number): string {
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toFixed(3);
}

/**
 * The longest time the event loop could not run a 1 ms timer, while `work` runs: what a member
 * sharing this loop (its ticks, heartbeats, HTTP) would have waited at worst. Beside it, the most
 * CPU time the process used between two turns of that timer (`longestCpuBlockMs`): on a shared
 * machine the wall figure also counts the time the process was descheduled, the CPU one does
 * not (it counts garbage collection, on any thread). And the longest garbage collection pause
 * meanwhile (`longestGcMs`, wall time): what part of a block the collector took, not the work.
 */
export async function longestBlockMs<T>(work: () => Promise<T>): Promise<{ value: T; longestBlockMs: number; longestCpuBlockMs: number; longestGcMs: number }> {
  const h: IntervalHistogram = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  let gcMax = 0;
  const gcs = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMax = Math.max(gcMax, entry.duration);
  });
  gcs.observe({ entryTypes: ['gc'] });
  let cpuMax = 0;
  let last = process.cpuUsage();
  const timer = setInterval(() => {
    const used = process.cpuUsage(last);
    last = process.cpuUsage();
    cpuMax = Math.max(cpuMax, (used.user + used.system) / 1000);
  }, 1);
  try {
    const value = await work();
    // Let the monitor see the end of the last block.
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { value, longestBlockMs: Math.max(0, h.max / 1e6 - 1), longestCpuBlockMs: cpuMax, longestGcMs: gcMax };
  } finally {
    gcs.disconnect();
    clearInterval(timer);
    h.disable();
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function rssMb(): number {
  return Math.round(process.memoryUsage().rss / 1e6);
}

export function heapMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return Math.round(process.memoryUsage().heapUsed / 1e6);
}
