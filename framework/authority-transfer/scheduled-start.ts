import type { AuditRecord, Clock, Logger } from '@baton/contracts';
import { endedAnswer } from './plan-waits.js';
import type { TransferPlan, TransferRequest } from './transfer-plan.js';
import type { TransferStatus } from './transfer-status.js';

/** A timer takes 24.8 days at most: a wait for a start is made of steps of a day. */
const DAY_MS = 24 * 3600_000;

/**
 * When a run gives up: a scheduled transfer's `notAfter`, else the budget from its start (its
 * `notBefore` if later than now).
 */
export function scheduledDeadline(request: TransferRequest, now: number, budgetMs: number): number {
  return request.notAfter ?? Math.max(now, request.notBefore ?? now) + budgetMs;
}

/**
 * Waits until a scheduled plan's `notBefore` by this member's clock; a cancel meanwhile ends the
 * wait with its answer. True when it waited (the start was ahead), false when it was due.
 */
export async function untilScheduledStart(plan: TransferPlan, clock: Clock, log: Logger): Promise<boolean> {
  const notBefore = plan.request.notBefore ?? 0;
  if (notBefore <= clock.now()) return false;
  log.info({ transfer: plan.id, authority: plan.authority, startsInMs: notBefore - clock.now() }, 'scheduled transfer registered; it starts at not_before');
  for (let startsIn = notBefore - clock.now(); startsIn > 0; startsIn = notBefore - clock.now()) {
    try {
      await clock.sleep(Math.min(startsIn, DAY_MS), plan.signal);
    } catch {
      throw endedAnswer(plan);
    }
    if (plan.isAbandoned()) throw endedAnswer(plan);
  }
  return true;
}

/**
 * What a scheduled transfer's POST answers: its status once its key's registration is
 * replicated (by this member or another), so any member shows and can cancel it; or the run's
 * own answer if that comes first (a key that committed already: its record) or if a cancel
 * raced the registration (the run's 409). `plan` is what the registry held once the run
 * started: another transfer's when the request was refused (the run rejects then).
 */
export async function answerAtRegistration(
  run: Promise<AuditRecord>,
  plan: TransferPlan | undefined,
  request: TransferRequest,
  status: () => TransferStatus | undefined,
): Promise<{ status: TransferStatus } | { record: AuditRecord }> {
  // Its outcome is read later (status, audit); this request answers at registration.
  run.catch(() => {});
  const registered = plan?.id === request.id ? plan.registeredOnce : new Promise<never>(() => {});
  const first = await Promise.race([run.then((record) => ({ record })), registered.then(() => undefined)]);
  if (first) return first;
  const now = status();
  if (!now || now.id !== request.id || plan!.isAbandoned()) return { record: await run };
  return { status: now };
}
