import { useState } from 'preact/hooks';
import type { ClusterStatus } from '../../cluster/schemas.js';
import type { z } from 'zod';
import type { transferStatusSchema } from '../../authority-transfer/api-schemas.js';
import type { AuditRecord } from '../../contracts/audit-store.js';
import { api, describeError } from './api.js';
import { AuthorityList } from './authority-list.js';
import type { ConfirmRequest } from './confirm.js';
import { NoticeBanner, useNotice } from './notice.js';
import { usePolling } from './poll.js';
import { ProgressBar } from './progress-bar.js';

interface TrackedMember {
  member: string;
  datacenter: string;
  state: string;
}
/** A transfer in flight as the control listener publishes it (GET /availability/v1/transfers/{authority}). */
type TransferStatus = z.infer<typeof transferStatusSchema>;
interface Watched {
  authority: string;
  home: string | null;
  epoch: number | null;
  records: AuditRecord[];
  error?: string;
}

interface Props {
  token: string;
  picture: ClusterStatus;
  ask: (request: ConfirmRequest) => void;
}

/** A planned transfer waits for the target's catch-up: up to its budget (five minutes by default). */
const TRANSFER_WAIT_MS = 6 * 60_000;
const BASE = '/availability/v1';

export function AuthorityView({ token, picture, ask }: Props) {
  const [notice, setNotice] = useNotice();
  const [watched, setWatched] = useState<string[]>([]);
  const members = usePolling(() => api<{ members: TrackedMember[] }>(token, 'GET', `${BASE}/members`), 5_000, [token]);
  const authorities = usePolling(
    () =>
      Promise.all(
        watched.map(async (authority): Promise<Watched> => {
          const path = encodeURIComponent(authority);
          try {
            const [home, audit] = await Promise.all([
              api<{ home: string; epoch: number }>(token, 'GET', `${BASE}/authorities/${path}`).catch((e) => {
                if ((e as { status?: number }).status === 404) return { home: null, epoch: null };
                throw e;
              }),
              api<{ records: AuditRecord[] }>(token, 'GET', `${BASE}/authorities/${path}/audit?limit=20`),
            ]);
            return { authority, home: home.home, epoch: home.epoch, records: audit.records };
          } catch (e) {
            return { authority, home: null, epoch: null, records: [], error: describeError(e) };
          }
        }),
      ),
    2_000,
    [token, watched.join(',')],
  );
  const watch = (authority: string) => {
    const name = authority.trim();
    if (name !== '' && !watched.includes(name)) setWatched([name, ...watched].slice(0, 10));
  };
  const datacenters = [...new Set((members.data?.members ?? []).map((m) => m.datacenter))];
  const transfers = picture.transfersInFlight.shown as unknown as TransferStatus[];
  const start = (request: { authority: string; source: string; target: string; reason: string }) => {
    watch(request.authority);
    setNotice({ text: `transfer of ${request.authority} from ${request.source} to ${request.target}: waiting for ${request.target} to catch up…`, kind: 'pending' });
    api<AuditRecord>(token, 'POST', `${BASE}/transfers`, request, TRANSFER_WAIT_MS)
      .then((record) => setNotice({ text: `committed: ${record.authority} moved from ${record.source} to ${record.target} at epoch ${record.epoch}`, kind: 'done' }))
      .catch((e) => setNotice({ text: `transfer of ${request.authority} did not commit: ${describeError(e)}`, kind: 'error' }))
      .finally(() => authorities.refresh());
  };
  const cancel = (t: TransferStatus) =>
    ask({
      title: `Cancel the transfer of ${t.authority}?`,
      body: <p>It is {t.state}: a cancel before the commit moves nothing and writes no audit.</p>,
      confirmLabel: 'Cancel the transfer',
      onConfirm: () =>
        void api(token, 'DELETE', `${BASE}/transfers/${encodeURIComponent(t.authority)}`)
          .then(() => setNotice({ text: `cancelled: the transfer of ${t.authority} was called off before it committed`, kind: 'done' }))
          .catch((e) => setNotice({ text: `cancel of ${t.authority} refused: ${describeError(e)}`, kind: 'error' })),
    });
  return (
    <>
      <NoticeBanner notice={notice} onDismiss={() => setNotice(undefined)} />
      <section aria-labelledby="inflight-title">
        <h2 id="inflight-title">
          Transfers in flight on {picture.servedBy} <span class="subtle">{picture.transfersInFlight.count}</span>
        </h2>
        {transfers.length === 0 ? (
          <p class="subtle">None.</p>
        ) : (
          <ul class="transfers" data-testid="authority-transfers">
            {transfers.map((t) => (
              <li key={t.id}>
                <strong>{t.authority}</strong>: {t.source} → {t.target}, <span data-field="state">{t.state}</span>, by {t.actor} ({t.reason})
                <ProgressBar
                  label={`${t.authority} catch-up`}
                  value={t.frontier ?? 0}
                  max={Math.max(t.barrier, 1)}
                  text={`target at ${t.frontier ?? 'no reading'} of barrier ${t.barrier}; times out in ${Math.round(t.deadline_in_ms / 1000)} s`}
                />
                {(t.state === 'AwaitingCatchUp' || t.state === 'Ready') && (
                  <button type="button" onClick={() => cancel(t)}>
                    Cancel…
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>
      <TransferForm datacenters={datacenters} ask={ask} onStart={start} />
      <AuthorityList token={token} onPick={watch} />
      <section aria-labelledby="authorities-title">
        <h2 id="authorities-title">Authorities</h2>
        <form
          class="inline-form"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            const input = (e.currentTarget as HTMLFormElement).elements.namedItem('authority') as HTMLInputElement;
            watch(input.value);
            input.value = '';
          }}
        >
          <label for="authority-search">Find an authority</label>
          <input id="authority-search" name="authority" placeholder="name" autocomplete="off" />
          <button type="submit">Look up</button>
        </form>
        {(authorities.data ?? []).map((a) => (
          <article key={a.authority} class="authority" data-authority={a.authority}>
            <h3>
              {a.authority}:{' '}
              <span data-field="home">{a.error ? a.error : a.home === null ? 'no home' : `home ${a.home}, epoch ${a.epoch}`}</span>
            </h3>
            {a.records.length === 0 ? (
              <p class="subtle">No moves in this member's audit.</p>
            ) : (
              <table data-testid={`audit-${a.authority}`}>
                <caption>Audit trail, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Move</th>
                    <th scope="col">Epoch</th>
                    <th scope="col">Actor</th>
                    <th scope="col">Reason</th>
                    <th scope="col">Barrier</th>
                    <th scope="col">Raft term/index</th>
                    <th scope="col">Id</th>
                    <th scope="col">Kind</th>
                  </tr>
                </thead>
                <tbody>
                  {a.records.map((r) => (
                    <tr key={r.commit_index}>
                      <td>
                        {r.source || 'no home'} → {r.target}
                      </td>
                      <td>{r.epoch}</td>
                      <td>{r.actor}</td>
                      <td>{r.reason}</td>
                      <td>{r.barrier}</td>
                      <td>
                        {r.commit_term}/{r.commit_index}
                      </td>
                      <td>{r.id}</td>
                      {/* Records sealed before kinds existed are planned transfers'. */}
                      <td>{r.kind ?? 'planned_transfer'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </article>
        ))}
      </section>
    </>
  );
}

function TransferForm({
  datacenters,
  ask,
  onStart,
}: {
  datacenters: string[];
  ask: Props['ask'];
  onStart: (request: { authority: string; source: string; target: string; reason: string }) => void;
}) {
  const [error, setError] = useState<string>();
  return (
    <section aria-labelledby="plan-title">
      <h2 id="plan-title">Planned transfer</h2>
      <form
        class="grid-form"
        onSubmit={(e) => {
          e.preventDefault();
          const form = new FormData(e.currentTarget as HTMLFormElement);
          const request = {
            authority: String(form.get('authority') ?? '').trim(),
            source: String(form.get('source') ?? ''),
            target: String(form.get('target') ?? ''),
            reason: String(form.get('reason') ?? '').trim(),
          };
          if (!request.authority || !request.reason) return setError('name the authority and give a reason: it goes into the audit');
          if (request.source === request.target) return setError('the target must be another datacenter');
          setError(undefined);
          ask({
            title: `Move ${request.authority} from ${request.source} to ${request.target}?`,
            body: (
              <p>
                It commits once {request.target} has applied every write {request.source} acknowledged, mints a new fencing epoch and seals an audit
                record with your reason: “{request.reason}”.
              </p>
            ),
            confirmLabel: 'Start the transfer',
            onConfirm: () => onStart(request),
          });
        }}
      >
        <label for="plan-authority">Authority</label>
        <input id="plan-authority" name="authority" required autocomplete="off" />
        <label for="plan-source">From</label>
        <select id="plan-source" name="source">
          {datacenters.map((d) => (
            <option key={d}>{d}</option>
          ))}
        </select>
        <label for="plan-target">To</label>
        <select id="plan-target" name="target">
          {datacenters.map((d, i) => (
            <option key={d} selected={i === 1}>
              {d}
            </option>
          ))}
        </select>
        <label for="plan-reason">Reason</label>
        <input id="plan-reason" name="reason" required maxLength={1024} autocomplete="off" />
        <span />
        <button type="submit" class="primary">
          Transfer…
        </button>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
