import type { SettledTransfer } from './recent-transfers.js';

const WIDTH = 560;
const HEIGHT = 140;
const PAD = { left: 48, right: 8, top: 8, bottom: 22 };

/**
 * Each transfer settled in the last ten minutes (a member that stopped answering counts with
 * what it last reported): a dot at the time it settled, as high as it took (log scale, so a
 * 5 ms handoff and a 5 s one both show).
 */
export function DurationPlot({ points, now }: { points: SettledTransfer[]; now: number }) {
  const unanswered = points.filter((p) => p.unanswered).length;
  const windowMs = 10 * 60_000;
  const maxMs = Math.max(10, ...points.map((p) => p.durationMs));
  const top = 10 ** Math.ceil(Math.log10(maxMs));
  const x = (at: number) => PAD.left + ((at - (now - windowMs)) / windowMs) * (WIDTH - PAD.left - PAD.right);
  const y = (ms: number) => {
    const v = Math.log10(Math.max(1, ms)) / Math.log10(top);
    return HEIGHT - PAD.bottom - v * (HEIGHT - PAD.top - PAD.bottom);
  };
  const ticks = [1, 10, 100, 1_000, 10_000, 100_000].filter((t) => t <= top);
  const label = (ms: number) => (ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`);
  const sorted = [...points].sort((a, b) => a.durationMs - b.durationMs);
  // Nearest rank: the smallest duration at least that share of transfers did not exceed.
  const rank = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]?.durationMs;
  const p50 = rank(0.5);
  const p99 = rank(0.99);
  return (
    <section aria-labelledby="plot-title">
      <h2 id="plot-title">
        Transfer durations, last 10 minutes{' '}
        <span class="subtle" data-testid="plot-summary">
          {points.length === 0
            ? 'none settled'
            : `${points.length} settled, p50 ${Math.round(p50!)} ms, p99 ${Math.round(p99!)} ms${unanswered ? ` (${unanswered} as last reported by members not answering)` : ''}`}
        </span>
      </h2>
      <svg class="plot" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`Transfer durations: ${points.length} transfers settled in the last 10 minutes`}>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(t)} y2={y(t)} class="grid" />
            <text x={PAD.left - 4} y={y(t) + 4} class="axis" text-anchor="end">
              {label(t)}
            </text>
          </g>
        ))}
        <text x={PAD.left} y={HEIGHT - 6} class="axis">
          −10 min
        </text>
        <text x={WIDTH - PAD.right} y={HEIGHT - 6} class="axis" text-anchor="end">
          now
        </text>
        {points.map((p, i) => (
          <circle key={i} cx={x(p.at)} cy={y(p.durationMs)} r={3.5} class={p.outcome === 'completed' || p.outcome === 'committed' ? 'dot ok' : 'dot bad'}>
            <title>{`${p.name ? `${p.name}: ` : ''}${p.outcome} in ${Math.round(p.durationMs)} ms (${p.member})`}</title>
          </circle>
        ))}
      </svg>
    </section>
  );
}
