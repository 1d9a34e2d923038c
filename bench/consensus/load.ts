// The load every setup runs: `concurrency` proposers, each proposing again as soon as its last
// proposal committed, for a fixed time. Latency is measured from the call to the commit answer.
import { performance } from 'node:perf_hooks';

export interface LoadSummary {
  concurrency: number;
  proposals: number;
  errors: number;
  seconds: number;
  proposalsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** The first error seen, so a failing setup says why instead of just being slow. */
  firstError?: string;
}

/** How long the same load runs unmeasured first, so connections, JIT and caches are warm alike. */
export const WARMUP_SECONDS = process.env.BENCH_QUICK === '1' ? 0.2 : 0.5;

/**
 * `propose(worker, n)` commits one proposal; it is called again as soon as it resolves. The
 * load runs `WARMUP_SECONDS` unmeasured first, then `seconds` measured.
 */
export async function runLoad(
  concurrency: number,
  seconds: number,
  propose: (worker: number, n: number) => Promise<unknown>,
): Promise<LoadSummary> {
  await measure(concurrency, WARMUP_SECONDS, propose);
  return measure(concurrency, seconds, propose);
}

async function measure(
  concurrency: number,
  seconds: number,
  propose: (worker: number, n: number) => Promise<unknown>,
): Promise<LoadSummary> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let n = 0;
  const end = performance.now() + seconds * 1000;
  const worker = async (w: number) => {
    while (performance.now() < end) {
      const started = performance.now();
      try {
        await propose(w, n++);
        latencies.push(performance.now() - started);
      } catch (error) {
        errors++;
        firstError ??= (error as Error).message;
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  const elapsed = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    concurrency,
    proposals: latencies.length,
    errors,
    seconds: Number(elapsed.toFixed(3)),
    proposalsPerSec: Math.round(latencies.length / elapsed),
    p50Ms: Number(percentile(latencies, 50).toFixed(3)),
    p99Ms: Number(percentile(latencies, 99).toFixed(3)),
    ...(firstError === undefined ? {} : { firstError }),
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Resolves once `condition` holds, checking every 10 ms; throws `what` after `timeoutMs`. */
export async function waitUntil(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
