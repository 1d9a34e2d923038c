import { useState } from 'preact/hooks';
import type { ClusterStatus } from '../../cluster/schemas.js';
import type { MethodResponse } from 'openapi-fetch';
import { answer, ApiError, describeError } from './api.js';
import { AuthorityList } from './authority-list.js';
import type { ConfirmRequest } from './confirm.js';
import { authorityControl, type AuthorityControl } from './node-clients.js';
import { NoticeBanner, useNotice, type Notice } from './notice.js';
import { usePolling } from './poll.js';
import { ProgressBar } from './progress-bar.js';

/**
 * A transfer in flight as the control listener publishes it (GET /availability/v1/transfers/{authority}):
 * the cluster picture's document gives its shown transfers as plain objects, and on an authority
 * member they are these.
 */
type TransferStatus = MethodResponse<AuthorityControl, 'get', '/availability/v1/transfers/{authority}'>;
/** A sealed move of the authority's trail (GET /availability/v1/authorities/{authority}/audit). */
type AuditRecord = MethodResponse<AuthorityControl, 'get', '/availability/v1/authorities/{authority}/audit'>['records'][number];
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

export function AuthorityView({ token, picture, ask }: Props) {
  const [notice, setNotice] = useNotice();
  const [watched, setWatched] = useState<string[]>([]);
  const members = usePolling(() => answer(authorityControl(token).GET('/availability/v1/members')), 5_000, [token]);
  const authorities = usePolling(
    () =>
      Promise.all(
        watched.map(async (authority): Promise<Watched> => {
          const node = authorityControl(token);
          const params = { path: { authority } };
          try {
            const [home, audit] = await Promise.all([
              answer(node.GET('/availability/v1/authorities/{authority}', { params })).catch((e) => {
                if (e instanceof ApiError && e.status === 404) return { home: null, epoch: null };
                throw e;
              }),
              answer(node.GET('/availability/v1/authorities/{authority}/audit', { params: { ...params, query: { limit: 20 } } })),
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
    answer(authorityControl(token, TRANSFER_WAIT_MS).POST('/availability/v1/transfers', { body: request }))
      .then((outcome) => setNotice(committedNotice(outcome)))
      .catch((e) => setNotice({ text: `transfer of ${request.authority} did not commit: ${describeError(e)}`, kind: 'error' }))
      .finally(() => authorities.refresh());
  };
  const cancel = (t: TransferStatus) =>
    ask({
      title: `Cancel the transfer of ${t.authority}?`,
      body: <p>It is {t.state}: a cancel before the commit moves nothing and writes no audit.</p>,
      confirmLabel: 'Cancel the transfer',
      onConfirm: () =>
        void answer(authorityControl(token).DELETE('/availability/v1/transfers/{authority}', { params: { path: { authority: t.authority } } }))
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

/**
 * What a planned transfer's answer says: its sealed record once it committed. A scheduled
 * transfer (one with not_before, which this form does not send) is answered with its status.
 */
function committedNotice(outcome: MethodResponse<AuthorityControl, 'post', '/availability/v1/transfers'>): Notice {
  if ('state' in outcome) return { text: `registered: ${outcome.authority} moves from ${outcome.source} to ${outcome.target} when its window opens`, kind: 'pending' };
  return { text: `committed: ${outcome.authority} moved from ${outcome.source} to ${outcome.target} at epoch ${outcome.epoch}`, kind: 'done' };
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
