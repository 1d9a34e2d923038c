import { useState } from 'preact/hooks';
import type { MethodResponse } from 'openapi-fetch';
import { STREAM_AUDIT_KINDS, type StreamAuditKind } from '../../stream-transfer/audit-kinds.js';
import { answer, describeError } from './api.js';
import { streamNode, type StreamNode } from './node-clients.js';
import { usePolling } from './poll.js';
import { clockTime, plural } from './words.js';

/** A page of the trail as GET /v1/admin/audit answers it, newest first. */
type AuditPage = MethodResponse<StreamNode, 'get', '/v1/admin/audit'>;
type AuditRow = AuditPage['records'][number];

const PAGE = 20;

/** The filters as the operator set them: what the route's `subject` and `kind` take ('' for any). */
interface Filter {
  subject: string;
  kind: StreamAuditKind | '';
}

function auditPage(token: string, filter: Filter, before?: string): Promise<AuditPage> {
  const query = { limit: PAGE, subject: filter.subject || undefined, kind: filter.kind || undefined, before };
  return answer(streamNode(token).GET('/v1/admin/audit', { params: { query } }));
}

/** The kind the select names, or any: its options are the kinds themselves. */
function auditKind(value: string): StreamAuditKind | '' {
  return STREAM_AUDIT_KINDS.find((kind) => kind === value) ?? '';
}

/**
 * The stream cluster's audit trail, newest first, from the serving member's audit store: every
 * ownership change the state machine sealed (creates, transfers, drains, rebalances, failovers,
 * fences, liveness verdicts), filtered by subject and kind. The newest page follows the trail as
 * it grows; older pages are read on demand and stay as they were read.
 */
export function AuditView({ token }: { token: string }) {
  const [filter, setFilter] = useState<Filter>({ subject: '', kind: '' });
  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit trail</h2>
      <form
        class="audit-filter"
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget as HTMLFormElement;
          const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement).value.trim();
          setFilter({ subject: value('audit-subject'), kind: auditKind(value('audit-kind')) });
        }}
      >
        <label for="audit-subject">Subject</label>
        <input id="audit-subject" name="audit-subject" placeholder="a stream, a node or cluster" autocomplete="off" />
        <label for="audit-kind">Kind</label>
        <select id="audit-kind" name="audit-kind">
          <option value="">any</option>
          {STREAM_AUDIT_KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {kind}
            </option>
          ))}
        </select>
        <button type="submit">Filter</button>
      </form>
      {/* Keyed by the filter: another filter starts from nothing, never showing the last one's rows. */}
      <AuditRecords key={`${filter.subject}|${filter.kind}`} token={token} filter={filter} />
    </section>
  );
}

function AuditRecords({ token, filter }: { token: string; filter: Filter }) {
  const [older, setOlder] = useState<{ records: AuditRow[]; next: string | null; error?: string }>();
  const newest = usePolling(() => auditPage(token, filter), 2_000, [token]);
  // Paging freezes what is shown (the newest page included) and reads on from its last row, so
  // a record that the polled newest page lets go of is still shown; one both hold shows once.
  const seen = new Set<string>();
  const rows = [...(newest.data?.records ?? []), ...(older?.records ?? [])].filter((r) => !seen.has(r.id) && seen.add(r.id));
  const next = older ? older.next : (newest.data?.next ?? null);
  const readOlder = async () => {
    if (!next) return;
    try {
      const page = await auditPage(token, filter, next);
      setOlder({ records: [...rows, ...page.records], next: page.next });
    } catch (e) {
      setOlder({ records: rows, next, error: describeError(e) });
    }
  };
  return (
    <>
      <p class="subtle" data-testid="audit-count">
        {plural(rows.length, 'records')} shown, newest first
      </p>
      {newest.error && (
        <p class="error" role="alert" data-testid="audit-error">
          Audit: {newest.error}
        </p>
      )}
      {rows.length === 0 ? (
        <p class="subtle">{newest.data ? 'No record matches.' : newest.error ? '' : 'Reading the trail…'}</p>
      ) : (
        <table data-testid="audit">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Kind</th>
              <th scope="col">Subject</th>
              <th scope="col">Change</th>
              <th scope="col">Epoch</th>
              <th scope="col">Actor</th>
              <th scope="col">Reason</th>
              <th scope="col">Part of</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id} data-audit={r.id} data-kind={r.kind} data-subject={r.subject}>
                <td title={`commit index ${r.commit_index}`}>{r.time === undefined ? `#${r.commit_index}` : clockTime(r.time)}</td>
                <td data-field="kind">{r.kind}</td>
                <th scope="row" data-field="subject">
                  {r.subject}
                </th>
                <td data-field="change">{r.from || r.to ? `${r.from ?? '–'} → ${r.to ?? '–'}` : '–'}</td>
                <td data-field="epoch">{r.epoch_before === undefined || r.epoch_before === r.epoch_after ? r.epoch_after : `${r.epoch_before} → ${r.epoch_after}`}</td>
                <td data-field="actor">{r.actor}</td>
                <td data-field="reason">{r.reason}</td>
                <td data-field="cause">{r.cause ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {older?.error && <p class="error">Older records: {older.error}</p>}
      {next && (
        <button type="button" onClick={() => void readOlder()}>
          Older records
        </button>
      )}
    </>
  );
}
