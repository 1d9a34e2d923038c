import { useRef } from 'preact/hooks';
import type { ClusterStatus, RecentTransfer } from '../../cluster/schemas.js';
import { clockTime, plural } from './words.js';

/** A settled transfer and the member that reported it; `unanswered` when that member no longer answers. */
export interface SettledTransfer extends RecentTransfer {
  member: string;
  unanswered: boolean;
}

/** What members keep (recent-transfers.ts): the same ten minutes. */
export const RECENT_WINDOW_MS = 10 * 60_000;

/**
 * The transfers every member settled in the last ten minutes. A member that stops answering
 * takes its report with it, so what it last reported is kept here (still within the window):
 * its transfers happened, and the settled count must not drop because it went down.
 */
export function useSettledTransfers(picture: ClusterStatus, now: number): SettledTransfer[] {
  const lastReported = useRef(new Map<string, RecentTransfer[]>());
  const since = now - RECENT_WINDOW_MS;
  const all: SettledTransfer[] = [];
  for (const m of picture.members) {
    if (m.report) lastReported.current.set(m.id, m.report.recentTransfers);
    const transfers = (m.report?.recentTransfers ?? lastReported.current.get(m.id) ?? []).filter((t) => t.at >= since);
    for (const t of transfers) all.push({ ...t, member: m.id, unanswered: !m.report });
  }
  return all;
}

const settledWell = (outcome: string) => outcome === 'completed' || outcome === 'committed';

/** The latest settled transfers by name, newest first: what moved, where, how it ended and how long it took. */
export function RecentTransfersList({ transfers }: { transfers: SettledTransfer[] }) {
  const newest = [...transfers].sort((a, b) => b.at - a.at).slice(0, 20);
  return (
    <section aria-labelledby="recent-title">
      <h2 id="recent-title">
        Recent transfers <span class="subtle">{transfers.length > newest.length ? `the latest ${newest.length} of ${transfers.length}` : plural(transfers.length, 'transfers')}</span>
      </h2>
      {newest.length === 0 ? (
        <p class="subtle">None settled in the last 10 minutes.</p>
      ) : (
        <table class="recent" data-testid="recent-transfers">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Move</th>
              <th scope="col">Outcome</th>
              <th scope="col">Took</th>
              <th scope="col">Settled at</th>
              <th scope="col">Reported by</th>
            </tr>
          </thead>
          <tbody>
            {newest.map((t, i) => (
              <tr key={`${t.member}-${t.at}-${i}`} data-recent={t.name ?? ''}>
                <th scope="row">{t.name ?? '(unnamed)'}</th>
                <td data-field="move">{t.source && t.target ? `${t.source} → ${t.target}` : '–'}</td>
                <td data-field="outcome" class={settledWell(t.outcome) ? '' : 'bad'}>
                  {t.outcome}
                </td>
                <td>{Math.round(t.durationMs)} ms</td>
                <td>{clockTime(t.at)}</td>
                <td>{t.unanswered ? `${t.member} (not answering; as last reported)` : t.member}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
