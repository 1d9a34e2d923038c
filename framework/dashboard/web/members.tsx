import type { ClusterStatus, MemberStatus } from '../../cluster/schemas.js';
import { clockTime, duration } from './words.js';

/**
 * `up (Alive)`; without a leader to publish verdicts, the last one is not shown as current:
 * `down (unknown, last Alive)`, since when in the banner above and the cell's title.
 */
function state(m: MemberStatus, picture: ClusterStatus): string {
  const reach = m.reachable ? 'up' : 'down';
  if (!m.liveness) return reach;
  const unknown = picture.livenessUnknown;
  if (unknown) return `${reach} (unknown, last ${m.liveness})`;
  return `${reach} (${m.liveness})`;
}

const dash = (v: number | string | null | undefined) => (v === null || v === undefined ? '–' : String(v));

/** Every member: the same columns `baton status` prints; the leader's row stands out. */
export function MembersTable({ picture, now }: { picture: ClusterStatus; now: number }) {
  const unknown = picture.livenessUnknown;
  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">
        Members{' '}
        <span class="subtle" data-testid="leader">
          {picture.leader ? `leader ${picture.leader}` : 'no leader'}, term {picture.term}
        </span>
      </h2>
      {unknown && (
        <p class="notice error" role="alert" data-testid="liveness-unknown">
          Liveness unknown since {clockTime(unknown.since)} ({duration(now - unknown.since)}): {unknown.detail}.
        </p>
      )}
      <table class="members" data-testid="members">
        <caption class="visually-hidden">Members of the cluster, as {picture.servedBy} sees them</caption>
        <thead>
          <tr>
            <th scope="col">Member</th>
            <th scope="col">Address</th>
            <th scope="col">State</th>
            <th scope="col">Role</th>
            <th scope="col">Term</th>
            <th scope="col">Commit</th>
            <th scope="col">Applied</th>
            <th scope="col" title="How late the member's event loop ran: the 99th percentile and the longest delay of the last 10 s">
              Loop delay p99 / max (10 s)
            </th>
            <th scope="col">Ready</th>
          </tr>
        </thead>
        <tbody>
          {picture.members.map((m) => {
            const r = m.report;
            const leads = m.id === picture.leader;
            return (
              <tr key={m.id} data-member={m.id} class={[m.reachable ? '' : 'down', leads ? 'leader' : ''].filter(Boolean).join(' ')} aria-current={leads ? 'true' : undefined}>
                <th scope="row">{m.id}</th>
                <td>{dash(m.address)}</td>
                <td data-field="state" title={picture.livenessUnknown ? `liveness unknown since ${clockTime(picture.livenessUnknown.since)}: no leader` : undefined}>
                  {state(m, picture)}
                </td>
                <td data-field="role">{r ? r.role : '–'}</td>
                <td>{dash(r?.term)}</td>
                <td>{dash(r?.commitIndex)}</td>
                <td>{dash(r?.appliedIndex)}</td>
                <td data-field="loop-delay">{r ? `${r.eventLoopDelay.p99Ms.toFixed(1)} / ${r.eventLoopDelay.maxMs.toFixed(1)} ms` : '–'}</td>
                <td>{r ? (r.ready ? 'ready' : `not ready: ${r.notReady?.reason}`) : (m.error ?? '')}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
