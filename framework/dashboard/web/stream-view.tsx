import { useRef, useState } from 'preact/hooks';
import type { ClusterStatus } from '../../cluster/schemas.js';
import type { MethodResponse } from 'openapi-fetch';
import { answer, ApiError, describeError } from './api.js';
import { AuditView } from './audit-view.js';
import { PlansView } from './plans-view.js';
import type { ConfirmRequest } from './confirm.js';
import { streamNode, type StreamNode } from './node-clients.js';
import { NoticeBanner, useNotice } from './notice.js';
import { usePolling } from './poll.js';
import { ProgressBar } from './progress-bar.js';
import { plural } from './words.js';

type NodeStatus = MethodResponse<StreamNode, 'get', '/v1/admin/nodes'>['nodes'][number];
/**
 * A transfer in flight, as GET /v1/admin/transfers lists it: the cluster picture's document gives
 * its shown transfers as plain objects, and on a stream node they are these.
 */
type PendingTransfer = MethodResponse<StreamNode, 'get', '/v1/admin/transfers'>['transfers'][number];
/** A stream as the listing shows it, or as GET /v1/streams/{stream} describes one looked up by name. */
type StreamRow = MethodResponse<StreamNode, 'get', '/v1/admin/streams'>['streams'][number] | MethodResponse<StreamNode, 'get', '/v1/streams/{stream}'>;
type Rebalance = MethodResponse<StreamNode, 'get', '/v1/admin/rebalance'>;
/** GET /v1/admin/transfers/{stream}: a linearizable read of where the stream is now. */
type CurrentOwner = MethodResponse<StreamNode, 'get', '/v1/admin/transfers/{stream}'>;

const PAGE = 25;

interface Props {
  token: string;
  picture: ClusterStatus;
  ask: (request: ConfirmRequest) => void;
}

export function StreamView({ token, picture, ask }: Props) {
  const [notice, setNotice] = useNotice();
  const nodes = usePolling(() => answer(streamNode(token).GET('/v1/admin/nodes')), 1_000, [token]);
  const rebalance = usePolling(() => answer(streamNode(token).GET('/v1/admin/rebalance')), 2_000, [token]);
  const act = async (what: string, run: () => Promise<unknown>) => {
    try {
      await run();
      setNotice({ text: what, kind: 'done' });
    } catch (e) {
      setNotice({ text: `${what} failed: ${describeError(e)}`, kind: 'error' });
    }
    nodes.refresh();
    rebalance.refresh();
  };
  const list = nodes.data?.nodes ?? [];
  return (
    <>
      <NoticeBanner notice={notice} onDismiss={() => setNotice(undefined)} />
      <Nodes nodes={list} error={nodes.error} ask={ask} act={act} token={token} livenessKnown={!picture.livenessUnknown} />
      {/* From the same answer as the summary line above, so the two always agree. */}
      <Transfers transfers={picture.transfersInFlight.shown as unknown as PendingTransfer[]} count={picture.transfersInFlight.count} />
      <RebalancePanel run={rebalance.data} ask={ask} act={act} token={token} />
      <PlansView token={token} />
      <Streams token={token} nodes={list} ask={ask} act={act} say={setNotice} />
      <AuditView token={token} />
    </>
  );
}

type Act = (what: string, run: () => Promise<unknown>) => Promise<void>;

/** A Dead node cannot close its streams for a drain: it is failed over, its streams opened elsewhere without its close. */
function failoverRequest(n: NodeStatus, act: Act, token: string): ConfirmRequest {
  return {
    title: `Fail over ${n.id}?`,
    body: (
      <p>
        {n.id} is Dead: its {plural(n.owned, 'streams')} open on the other nodes at the next epoch, without its close. The object store fences it, so
        if it comes back its next write fails.
      </p>
    ),
    confirmLabel: `Fail over ${n.id}`,
    onConfirm: () => void act(`failing over ${n.id}`, () => answer(streamNode(token).POST('/v1/admin/nodes/{node}/failover', { params: { path: { node: n.id } } }))),
  };
}

function Nodes({ nodes, error, ask, act, token, livenessKnown }: { nodes: NodeStatus[]; error?: string; ask: Props['ask']; act: Act; token: string; livenessKnown: boolean }) {
  // The owned count when a drain was first seen: what "100%" is measured against.
  const drainStart = useRef(new Map<string, number>());
  return (
    <section aria-labelledby="nodes-title">
      <h2 id="nodes-title">Streams per node</h2>
      {error && <p class="error">Nodes: {error}</p>}
      <ul class="nodes" data-testid="nodes">
        {nodes.map((n) => {
          if (!n.draining) drainStart.current.delete(n.id);
          else if (!drainStart.current.has(n.id)) drainStart.current.set(n.id, Math.max(n.owned, 1));
          const start = drainStart.current.get(n.id) ?? 0;
          return (
            <li key={n.id} data-node={n.id}>
              <ProgressBar label={`${n.id} slots`} value={n.owned} max={n.slots} text={`${n.owned} / ${n.slots} streams${n.incoming ? `, ${n.incoming} incoming` : ''}${n.outgoing ? `, ${n.outgoing} outgoing` : ''}`} />
              {n.draining && (
                <ProgressBar
                  label={`${n.id} drain`}
                  testId={`drain-${n.id}`}
                  value={n.drained ? start : start - n.owned}
                  max={start}
                  text={n.drained ? 'drained: 100%' : `draining: ${n.owned} left`}
                />
              )}
              <div class="row-actions">
                <span class="subtle" data-field="liveness">
                  {livenessKnown ? n.liveness : `${n.liveness}? (no leader: the last verdict)`}{' '}
                </span>
                {n.liveness === 'Dead' ? (
                  // A failover on a verdict that is no longer current could take the streams of a live node.
                  <button
                    type="button"
                    disabled={!livenessKnown}
                    title={livenessKnown ? undefined : 'without a leader, Dead is the last verdict, not a current one'}
                    onClick={() => ask(failoverRequest(n, act, token))}
                  >
                    Fail over {n.id}
                  </button>
                ) : n.draining ? (
                  <button
                    type="button"
                    onClick={() =>
                      ask({
                        title: `Undrain ${n.id}?`,
                        body: <p>{n.id} will take new placements again.</p>,
                        confirmLabel: `Undrain ${n.id}`,
                        onConfirm: () => void act(`${n.id} takes placements again`, () => answer(streamNode(token).POST('/v1/admin/nodes/{node}/undrain', { params: { path: { node: n.id } } }))),
                      })
                    }
                  >
                    Undrain {n.id}
                  </button>
                ) : (
                  <button
                    type="button"
                    onClick={() =>
                      ask({
                        title: `Drain ${n.id}?`,
                        body: <p>Its {plural(n.owned, 'streams')} move to the other nodes, a few at a time; it then owns none and can be taken down.</p>,
                        confirmLabel: `Drain ${n.id}`,
                        onConfirm: () => void act(`draining ${n.id}`, () => answer(streamNode(token).POST('/v1/admin/nodes/{node}/drain', { params: { path: { node: n.id } } }))),
                      })
                    }
                  >
                    Drain {n.id}
                  </button>
                )}
              </div>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function Transfers({ transfers, count }: { transfers: PendingTransfer[]; count: number }) {
  return (
    <section aria-labelledby="transfers-title">
      <h2 id="transfers-title">
        Transfers in flight{' '}
        <span class="subtle" data-testid="transfers-count">
          {count > transfers.length ? `${count}, the oldest ${transfers.length} shown` : count}
        </span>
      </h2>
      {count === 0 ? (
        <p class="subtle">None: every stream is settled on its owner.</p>
      ) : (
        <table data-testid="transfers">
          <thead>
            <tr>
              <th scope="col">Stream</th>
              <th scope="col">From</th>
              <th scope="col">To</th>
              <th scope="col">Phase</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {transfers.map((t) => (
              <tr key={t.stream}>
                <th scope="row">{t.stream}</th>
                <td>{t.source}</td>
                <td>{t.target}</td>
                <td>pending: {t.source} closes epoch {t.epoch}, then {t.target} opens</td>
                <td>{t.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function RebalancePanel({ run, ask, act, token }: { run?: Rebalance; ask: Props['ask']; act: Act; token: string }) {
  const [planning, setPlanning] = useState(false);
  const [error, setError] = useState<string>();
  const plan = async () => {
    setPlanning(true);
    setError(undefined);
    try {
      const { moves } = await answer(streamNode(token).POST('/v1/admin/rebalance', { body: { dryRun: true } }));
      ask({
        title: moves.length === 0 ? 'Nothing to rebalance' : `Rebalance: ${moves.length} moves`,
        body:
          moves.length === 0 ? (
            <p>The streams are spread as evenly as the slots allow.</p>
          ) : (
            <ol class="plan" data-testid="rebalance-plan">
              {moves.slice(0, 50).map((m) => (
                <li key={m.stream}>
                  {m.stream} → {m.target}
                </li>
              ))}
              {moves.length > 50 && <li>… and {moves.length - 50} more</li>}
            </ol>
          ),
        confirmLabel: moves.length === 0 ? 'OK' : 'Start rebalance',
        onConfirm: () => {
          if (moves.length > 0) void act(`rebalance started: ${moves.length} moves`, () => answer(streamNode(token).POST('/v1/admin/rebalance', { body: {} })));
        },
      });
    } catch (e) {
      setError(describeError(e));
    } finally {
      setPlanning(false);
    }
  };
  const active = run && run.planned > 0;
  return (
    <section aria-labelledby="rebalance-title">
      <h2 id="rebalance-title">Rebalance</h2>
      {active && <ProgressBar label="rebalance" testId="rebalance-progress" value={run.started + run.skipped} max={run.planned} text={`${run.started} of ${run.planned} moves started${run.skipped ? `, ${run.skipped} skipped` : ''}`} />}
      {error && <p class="error">Rebalance plan: {error}</p>}
      <button type="button" onClick={() => void plan()} disabled={planning}>
        {planning ? 'Planning…' : 'Plan a rebalance…'}
      </button>
    </section>
  );
}

function Streams({ token, nodes, ask, act, say }: { token: string; nodes: NodeStatus[]; ask: Props['ask']; act: Act; say: ReturnType<typeof useNotice>[1] }) {
  const [cursors, setCursors] = useState<string[]>(['']);
  const [search, setSearch] = useState('');
  const [looked, setLooked] = useState<string[]>([]);
  const after = cursors[cursors.length - 1];
  const page = usePolling(
    async () => {
      try {
        const body = await answer(streamNode(token).GET('/v1/admin/streams', { params: { query: { limit: PAGE, after: after || undefined } } }));
        return { listed: true as const, streams: body.streams, next: body.next };
      } catch (e) {
        // A node without the listing route: look streams up by name instead.
        if (e instanceof ApiError && (e.status === 404 || e.status === 405)) return { listed: false as const, streams: [], next: null };
        throw e;
      }
    },
    2_000,
    [token, after],
  );
  const watched = usePolling(
    () => Promise.all(looked.map((s) => answer(streamNode(token).GET('/v1/streams/{stream}', { params: { path: { stream: s } } })).catch((e) => ({ stream: s, missing: describeError(e) }) as StreamRow & { missing: string }))),
    1_000,
    [token, looked.join(',')],
  );
  const lookUp = (name: string) => {
    const trimmed = name.trim();
    if (trimmed !== '' && !looked.includes(trimmed)) setLooked([trimmed, ...looked].slice(0, 20));
  };
  // The row may be a poll old: the question names the owner and epoch as they are now.
  const transfer = async (row: StreamRow, target: string) => {
    let now: CurrentOwner;
    try {
      now = await answer(streamNode(token).GET('/v1/admin/transfers/{stream}', { params: { path: { stream: row.stream } } }));
    } catch (e) {
      say({ text: `${row.stream} cannot be transferred now: ${describeError(e)}`, kind: 'error' });
      return;
    }
    if (now.status === 'pending') {
      say({ text: `${row.stream} is already moving from ${now.source} to ${now.target}`, kind: 'error' });
      return;
    }
    if (now.owner === target) {
      say({ text: `${row.stream} is already on ${target} (epoch ${now.epoch})`, kind: 'error' });
      return;
    }
    ask({
      title: `Transfer ${row.stream} to ${target}?`,
      body: (
        <p>
          {now.owner} closes it at epoch {now.epoch}; {target} opens it at the next epoch. No record data moves; appends wait briefly during the handoff.
        </p>
      ),
      confirmLabel: `Transfer to ${target}`,
      onConfirm: () => {
        lookUp(row.stream);
        void act(`transfer of ${row.stream} to ${target} accepted`, () => answer(streamNode(token).POST('/v1/admin/transfers', { body: { stream: row.stream, target } })));
      },
    });
  };
  const filtered = (page.data?.streams ?? []).filter((s) => s.stream.includes(search.trim()));
  const rows: (StreamRow & { missing?: string })[] = [...(watched.data ?? []), ...filtered.filter((s) => !looked.includes(s.stream))];
  return (
    <section aria-labelledby="streams-title">
      <h2 id="streams-title">Streams</h2>
      <form
        class="inline-form"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          lookUp(search);
        }}
      >
        <label for="stream-search">Find a stream</label>
        <input id="stream-search" name="stream" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} placeholder="name" autocomplete="off" />
        <button type="submit">Look up</button>
      </form>
      {page.data && !page.data.listed && <p class="subtle">This node does not list streams; look them up by name.</p>}
      {page.error && <p class="error">Streams: {page.error}</p>}
      <table data-testid="streams">
        <thead>
          <tr>
            <th scope="col">Stream</th>
            <th scope="col">Owner</th>
            <th scope="col">Epoch</th>
            <th scope="col">Tail</th>
            <th scope="col">State</th>
            <th scope="col">Transfer to</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <tr key={s.stream} data-stream={s.stream}>
              <th scope="row">{s.stream}</th>
              {s.missing ? (
                <td colSpan={5} class="error">
                  {s.missing}
                </td>
              ) : (
                <>
                  <td data-field="owner">{s.owner}</td>
                  <td data-field="epoch">{s.epoch}</td>
                  <td>{s.tail}</td>
                  <td data-field="state">{s.transfer ? `moving to ${s.transfer.target}` : s.state}</td>
                  <td>
                    <TransferPicker stream={s} nodes={nodes} onPick={(target) => void transfer(s, target)} />
                  </td>
                </>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {page.data?.listed && (
        <div class="pager">
          <button type="button" disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>
            Previous
          </button>
          <button type="button" disabled={!page.data.next} onClick={() => page.data?.next && setCursors([...cursors, page.data.next])}>
            Next
          </button>
        </div>
      )}
    </section>
  );
}

function TransferPicker({ stream, nodes, onPick }: { stream: StreamRow; nodes: NodeStatus[]; onPick: (target: string) => void }) {
  const targets = nodes.filter((n) => n.id !== stream.owner && !n.draining && n.liveness !== 'Dead');
  const [target, setTarget] = useState('');
  const chosen = targets.some((n) => n.id === target) ? target : (targets[0]?.id ?? '');
  const id = `target-${stream.stream}`;
  return (
    <span class="picker">
      <label for={id} class="visually-hidden">
        Target node for {stream.stream}
      </label>
      <select id={id} value={chosen} onChange={(e) => setTarget((e.target as HTMLSelectElement).value)} disabled={targets.length === 0 || Boolean(stream.transfer)}>
        {targets.map((n) => (
          <option key={n.id} value={n.id}>
            {n.id}
          </option>
        ))}
      </select>
      <button type="button" disabled={!chosen || Boolean(stream.transfer)} onClick={() => onPick(chosen)}>
        Transfer…
      </button>
    </span>
  );
}
