import type { TransferIntent } from './ownership.js';
import type { PlanState, TransferPlan, TransferRequest } from './transfer-plan.js';

/** What GET /availability/v1/transfers/{authority} shows of a transfer in flight. */
export interface TransferStatus extends TransferRequest {
  state: PlanState;
  barrier: number;
  frontier: number | null;
  last_reading_age_ms: number | null;
  age_ms: number;
  deadline_in_ms: number;
  outcome_unknown: boolean;
  /** The source acknowledges no write to the authority until the move commits or thaws. */
  frozen: boolean;
  /** The member driving the transfer (probing, committing). */
  driver: string;
  /** A scheduled transfer's start and end (RFC 3339), as its POST gave them. */
  not_before?: string;
  not_after?: string;
}

const iso = (at: number | undefined, field: 'not_before' | 'not_after') => (at === undefined ? {} : { [field]: new Date(at).toISOString() });

/**
 * What a member shows of the authority's transfer: the plan it drives (`plan`), else what the
 * replicated registration says of one driven by another member (or by nobody since a restart).
 * `budgetMs` dates a registration from its deadline, the one time every member holds of it.
 */
export function transferStatus(
  plan: TransferPlan | undefined,
  intent: TransferIntent | undefined,
  { now, self, budgetMs }: { now: number; self: string; budgetMs: number },
): TransferStatus | undefined {
    if (plan) {
      const r = plan.request;
      return {
        id: r.id,
        authority: r.authority,
        source: r.source,
        target: r.target,
        actor: r.actor,
        reason: r.reason,
        state: plan.state,
        barrier: plan.barrier,
        frontier: plan.frontier ?? null,
        last_reading_age_ms: plan.lastReadingAt === undefined ? null : now - plan.lastReadingAt,
        age_ms: now - plan.createdAt,
        deadline_in_ms: Math.max(0, plan.deadline - now),
        outcome_unknown: plan.unresolved,
        frozen: intent?.id === plan.id && intent.frozen,
        driver: self,
        ...iso(r.notBefore, 'not_before'),
        ...iso(r.notAfter, 'not_after'),
      };
    }
    if (!intent) return undefined;
    // Driven by another member: what the replicated registration says.
    let barrier = 0;
    for (const s of intent.sources) barrier = Math.max(barrier, s.final ?? s.barrier);
    return {
      id: intent.id,
      authority: intent.authority,
      source: intent.source,
      target: intent.target,
      actor: intent.actor,
      reason: intent.reason,
      state: 'AwaitingCatchUp',
      barrier,
      frontier: null,
      last_reading_age_ms: null,
      age_ms: Math.max(0, now - (intent.deadline - budgetMs)),
      deadline_in_ms: Math.max(0, intent.deadline - now),
      outcome_unknown: false,
      frozen: intent.frozen,
      driver: intent.driver,
      ...iso(intent.notBefore, 'not_before'),
    };
}
