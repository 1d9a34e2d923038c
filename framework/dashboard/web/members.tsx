import type { ClusterStatus, MemberStatus } from '../../cluster/schemas.js';

function state(m: MemberStatus): string {
  const reach = m.reachable ? 'up' : 'down';
  return m.liveness ? `${reach} (${m.liveness})` : reach;
}

const dash = (v: number | string | null | undefined) => (v === null || v === undefined ? '–' : String(v));

/** Every member: the same columns `baton status` prints. */
export function MembersTable({ picture }: { picture: ClusterStatus }) {
  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">
        Members{' '}
        <span class="subtle" data-testid="leader">
          {picture.leader ? `leader ${picture.leader}` : 'no leader'}, term {picture.term}
        </span>
      </h2>
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
            <th scope="col">Loop delay</th>
            <th scope="col">Ready</th>
          </tr>
        </thead>
        <tbody>
          {picture.members.map((m) => {
            const r = m.report;
            return (
              <tr key={m.id} data-member={m.id} class={m.reachable ? '' : 'down'}>
                <th scope="row">{m.id}</th>
                <td>{dash(m.address)}</td>
                <td data-field="state">{state(m)}</td>
                <td data-field="role">{r ? r.role : '–'}</td>
                <td>{dash(r?.term)}</td>
                <td>{dash(r?.commitIndex)}</td>
                <td>{dash(r?.appliedIndex)}</td>
                <td>{r ? `${r.eventLoopDelay.maxMs.toFixed(1)} ms` : '–'}</td>
                <td>{r ? (r.ready ? 'ready' : `not ready: ${r.notReady?.reason}`) : (m.error ?? '')}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
