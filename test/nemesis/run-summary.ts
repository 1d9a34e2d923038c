import type { FaultKind, FaultWindow } from './nemesis.js';
import type { OperationRecord } from './operation-log.js';

export interface OutcomeCounts {
  ops: number;
  ok: number;
  fail: number;
  unknown: number;
}

export interface RunSummary {
  counts: OutcomeCounts;
  byOperation: Record<string, OutcomeCounts>;
  /** Share of operations invoked while a fault of this kind was on that ended ok; `quiet` is the rest. */
  availability: Partial<Record<FaultKind | 'quiet', { ops: number; ok: number; ratio: number }>>;
  faults: Partial<Record<FaultKind, number>>;
  /**
   * For each fault that hit the leader: ms from the fault to the first operation invoked after it
   * that ended ok (a new leader serving; only `progressOps` count, when given). Absent when
   * nothing succeeded before the run ended.
   */
  failoverMs: number[];
}

function count(records: readonly OperationRecord[]): OutcomeCounts {
  const c: OutcomeCounts = { ops: records.length, ok: 0, fail: 0, unknown: 0 };
  for (const r of records) c[r.outcome ?? 'unknown'] += 1;
  return c;
}

export function summarize(
  records: readonly OperationRecord[],
  windows: readonly FaultWindow[],
  progressOps?: readonly string[],
): RunSummary {
  const byOperation: Record<string, OutcomeCounts> = {};
  for (const f of new Set(records.map((r) => r.f)))
    byOperation[f] = count(records.filter((r) => r.f === f));

  const during = (r: OperationRecord): FaultWindow | undefined =>
    windows.find((w) => r.invokedAt >= w.start && r.invokedAt < (w.end ?? Infinity));
  const buckets = new Map<FaultKind | 'quiet', OperationRecord[]>();
  for (const r of records) {
    const key = during(r)?.kind ?? 'quiet';
    buckets.set(key, [...(buckets.get(key) ?? []), r]);
  }
  const availability: RunSummary['availability'] = {};
  for (const [key, ops] of buckets) {
    const ok = ops.filter((r) => r.outcome === 'ok').length;
    availability[key] = { ops: ops.length, ok, ratio: ops.length === 0 ? 0 : ok / ops.length };
  }

  const faults: RunSummary['faults'] = {};
  for (const w of windows) faults[w.kind] = (faults[w.kind] ?? 0) + 1;

  const failoverMs: number[] = [];
  for (const w of windows.filter((w) => w.hitLeader)) {
    const firstOk = records
      .filter(
        (r) => r.outcome === 'ok' && r.invokedAt >= w.start && (progressOps?.includes(r.f) ?? true),
      )
      .reduce((best, r) => Math.min(best, r.completedAt!), Infinity);
    if (Number.isFinite(firstOk)) failoverMs.push(Math.round(firstOk - w.start));
  }
  return { counts: count(records), byOperation, availability, faults, failoverMs };
}

export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** The run summary a person reads: counts, availability per fault kind, failover times. */
export function formatSummary(
  title: string,
  summary: RunSummary,
  skipped: readonly string[],
): string {
  const c = summary.counts;
  const lines = [`${title}: ${c.ops} ops, ${c.ok} ok, ${c.fail} fail, ${c.unknown} unknown`];
  for (const [f, n] of Object.entries(summary.byOperation)) {
    lines.push(`  ${f.padEnd(10)} ${n.ops} ops, ${n.ok} ok, ${n.fail} fail, ${n.unknown} unknown`);
  }
  const faults = Object.entries(summary.faults).map(([k, n]) => `${n} ${k}`);
  lines.push(`  faults: ${faults.length > 0 ? faults.join(', ') : 'none'}`);
  for (const [key, a] of Object.entries(summary.availability)) {
    if (!a) continue;
    lines.push(
      `  availability during ${key.padEnd(12)} ${(a.ratio * 100).toFixed(1)}% ok (${a.ok}/${a.ops})`,
    );
  }
  const f = [...summary.failoverMs].sort((a, b) => a - b);
  lines.push(
    f.length === 0
      ? '  failover: no fault hit the leader'
      : `  failover after a fault on the leader: median ${quantile(f, 0.5)} ms, max ${f[f.length - 1]} ms (${f.length} faults)`,
  );
  for (const s of skipped) lines.push(`  skipped ${s}`);
  return lines.join('\n');
}
