import { useState } from 'preact/hooks';
import type { MethodResponse } from 'openapi-fetch';
import { answer } from './api.js';
import { authorityControl, type AuthorityControl } from './node-clients.js';
import { usePolling } from './poll.js';

/** One page of GET /availability/v1/authorities, as the control listener's document gives it. */
type AuthorityPage = MethodResponse<AuthorityControl, 'get', '/availability/v1/authorities'>;
type CatchUpView = AuthorityPage['authorities'][number]['catch_up'];

/** Rows per page: a screenful; the listing itself bounds a page at 1,000. */
const PAGE = 25;

/**
 * Every authority with a home, a page at a time (GET /availability/v1/authorities): the member's
 * applied view, so it costs the member one bounded page per poll however many authorities exist.
 * Picking one looks it up (home, epoch and audit trail) in the view below. A home still catching
 * up on the move that made it home (its members refuse writes until they hold the finals) says
 * which members, and each final beside what the serving member's replica holds.
 */
export function AuthorityList({ token, onPick }: { token: string; onPick: (authority: string) => void }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const after = cursors[cursors.length - 1];
  const page = usePolling(
    () => answer(authorityControl(token).GET('/availability/v1/authorities', { params: { query: { limit: PAGE, after } } })),
    5_000,
    [token, after ?? ''],
  );
  const data = page.data;
  return (
    <section aria-labelledby="authority-list-title">
      <h2 id="authority-list-title">
        All authorities <span class="subtle">{data ? data.total : ''}</span>
      </h2>
      {page.error && <p class="error">{page.error}</p>}
      {data && data.authorities.length === 0 ? (
        <p class="subtle">No authority has a home yet.</p>
      ) : (
        <table data-testid="authority-list">
          <thead>
            <tr>
              <th scope="col">Authority</th>
              <th scope="col">Home</th>
              <th scope="col">Epoch</th>
              <th scope="col">Catching up</th>
            </tr>
          </thead>
          <tbody>
            {(data?.authorities ?? []).map((a) => (
              <tr key={a.authority} data-listed={a.authority}>
                <th scope="row">
                  <button type="button" class="link" onClick={() => onPick(a.authority)}>
                    {a.authority}
                  </button>
                </th>
                <td data-field="home">{a.home}</td>
                <td data-field="epoch">{a.epoch}</td>
                <td data-field="catch-up">{catchUpText(a.catch_up)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p class="inline-form">
        {cursors.length > 0 && (
          <button type="button" onClick={() => setCursors([])}>
            First page
          </button>
        )}
        {data?.next && (
          <button type="button" onClick={() => setCursors([...cursors, data.next!])}>
            Next page
          </button>
        )}
      </p>
    </section>
  );
}

/** `west-2 (east-1: final 5, 3 held at north-1)`, or nothing once every member of the home settled. */
function catchUpText(catchUp: CatchUpView): string {
  if (!catchUp) return '';
  const finals = catchUp.finals.map((f) => `${f.source}: final ${f.final}, ${f.held} held at ${catchUp.held_at}`).join('; ');
  return `${catchUp.waiting_on.join(', ')} (${finals})`;
}
