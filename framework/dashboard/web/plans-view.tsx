import { useState } from 'preact/hooks';
import type { MethodResponse } from 'openapi-fetch';
import { answer, describeError } from './api.js';
import { streamNode, type StreamNode } from './node-clients.js';
import { usePolling } from './poll.js';
import { ProgressBar } from './progress-bar.js';
import { plural } from './words.js';

/** A kept plan as GET /v1/admin/plans lists it: without the moves and effect its own GET answers. */
type PlanSummary = MethodResponse<StreamNode, 'get', '/v1/admin/plans'>['plans'][number];

const goalText = (p: PlanSummary) => (p.goal.type === 'drain' ? `drain ${p.goal.nodes.join(', ')}` : p.goal.type);

/**
 * Plans as objects (POST /v1/admin/plans): the kept plans, and one plan's preview (its moves,
 * streams per node and per label value before and after, the violations it leaves) and, once
 * executed, its progress. Planning moves nothing; executing, stopping and planning anew are
 * the operator's buttons.
 */
export function PlansView({ token }: { token: string }) {
  const [chosen, setChosen] = useState<string>();
  const [error, setError] = useState<string>();
  const plans = usePolling(() => answer(streamNode(token).GET('/v1/admin/plans')), 1_000, [token]);
  const list = plans.data?.plans ?? [];
  const shown = chosen ?? list[0]?.id;
  const act = async (run: () => Promise<{ id: string }>) => {
    setError(undefined);
    try {
      setChosen((await run()).id);
    } catch (e) {
      setError(describeError(e));
    }
    plans.refresh();
  };
  return (
    <section aria-labelledby="plans-title">
      <h2 id="plans-title">Plans</h2>
      <p class="subtle">A plan moves nothing until it is executed; one runs at a time.</p>
      <div class="plan-actions">
        {(['rebalance', 'restore-preferences'] as const).map((goal) => (
          <button key={goal} type="button" onClick={() => void act(() => answer(streamNode(token).POST('/v1/admin/plans', { body: { goal } })))}>
            Plan {goal === 'rebalance' ? 'a rebalance' : 'a return to preferred labels'}
          </button>
        ))}
      </div>
      {(error || plans.error) && (
        <p class="error" role="alert" data-testid="plan-error">
          Plans: {error ?? plans.error}
        </p>
      )}
      {list.length > 0 && (
        <table data-testid="plans">
          <thead>
            <tr>
              <th scope="col">Plan</th>
              <th scope="col">Goal</th>
              <th scope="col">Status</th>
              <th scope="col">Moves</th>
            </tr>
          </thead>
          <tbody>
            {list.map((p) => (
              <tr key={p.id} data-plan={p.id} aria-selected={p.id === shown}>
                <th scope="row">
                  <button type="button" class="link" onClick={() => setChosen(p.id)}>
                    {p.id}
                  </button>
                </th>
                <td>{goalText(p)}</td>
                <td data-field="status">{p.stale ? `${p.status} (stale)` : p.status}</td>
                <td>{p.planned}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {shown && <PlanDetail key={shown} token={token} id={shown} act={act} />}
    </section>
  );
}

function PlanDetail({ token, id, act }: { token: string; id: string; act: (run: () => Promise<{ id: string }>) => Promise<void> }) {
  const plan = usePolling(() => answer(streamNode(token).GET('/v1/admin/plans/{plan}', { params: { path: { plan: id } } })), 1_000, [token, id]);
  const p = plan.data;
  if (!p) return <p class="subtle">{plan.error ? `Plan ${id}: ${plan.error}` : 'Reading the plan…'}</p>;
  const v = p.effect.violations;
  return (
    <div data-testid="plan-detail" data-plan={p.id} data-status={p.status}>
      <h3>
        {p.id}: {goalText(p)}, {p.status}
        {p.stale ? ' (stale: the cluster changed since it was planned; plan again)' : ''}
      </h3>
      <p>
        {plural(p.planned, 'moves')}, {p.limits.maxConcurrent} at once{p.limits.movesPerSecond === null ? '' : `, ${p.limits.movesPerSecond} per second`}
      </p>
      {p.status !== 'planned' && (
        <ProgressBar
          label={`plan ${p.id}`}
          testId="plan-progress"
          value={p.progress.done + p.progress.skipped}
          max={p.planned}
          text={`${p.progress.done} of ${p.planned} moved, ${p.progress.inFlight} moving, ${p.progress.waiting} waiting${p.progress.dropped ? `, ${p.progress.dropped} dropped` : ''}`}
        />
      )}
      <div class="plan-actions">
        {p.status === 'planned' && (
          <button type="button" disabled={p.stale} onClick={() => void act(() => answer(streamNode(token).POST('/v1/admin/plans/{plan}/execute', { params: { path: { plan: p.id } } })))}>
            Execute
          </button>
        )}
        {(p.status === 'planned' || p.status === 'running') && (
          <button type="button" onClick={() => void act(() => answer(streamNode(token).DELETE('/v1/admin/plans/{plan}', { params: { path: { plan: p.id } } })))}>
            {p.status === 'running' ? 'Stop' : 'Discard'}
          </button>
        )}
      </div>
      <table data-testid="plan-effect">
        <caption>Streams per node</caption>
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">Before</th>
            <th scope="col">After</th>
            <th scope="col">Out</th>
            <th scope="col">In</th>
          </tr>
        </thead>
        <tbody>
          {p.effect.byNode.map((n) => (
            <tr key={n.node} data-node={n.node}>
              <th scope="row">{n.node}</th>
              <td data-field="before">{n.before}</td>
              <td data-field="after">{n.after}</td>
              <td>{n.out}</td>
              <td>{n.in}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {p.effect.byLabel.length > 0 && (
        <table data-testid="plan-labels">
          <caption>Streams per label value</caption>
          <tbody>
            {p.effect.byLabel.map((l) => (
              <tr key={`${l.label}=${l.value}`} data-label={`${l.label}=${l.value}`}>
                <th scope="row">
                  {l.label}={l.value}
                </th>
                <td data-field="before">{l.before}</td>
                <td data-field="after">{l.after}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p data-testid="plan-violations">
        Violations before → after: required labels {v.required.before} → {v.required.after}, preferences {v.preferences.before} → {v.preferences.after}, uneven spread groups{' '}
        {v.spread.before} → {v.spread.after}
        {p.effect.unplaceableCount > 0 ? `; ${plural(p.effect.unplaceableCount, 'streams')} no node can take` : ''}
      </p>
      {p.moves.length > 0 && (
        <ol class="plan" data-testid="plan-moves">
          {p.moves.map((m) => (
            <li key={m.stream}>
              {m.stream}: {m.source ?? '–'} → {m.target}
            </li>
          ))}
          {p.truncated && <li>… and more</li>}
        </ol>
      )}
    </div>
  );
}
