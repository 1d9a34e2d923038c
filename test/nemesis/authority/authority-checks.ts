import type { OperationLog } from '../operation-log.js';
import type { TransferInput, WriteInput, WriteOutput } from './authority-workload.js';

/** The sealed audit record of a committed planned transfer (seed 003, "The audit record"). */
export interface AuditRecord {
  id: string;
  authority: string;
  source: string;
  target: string;
  barrier: number;
  epoch: number;
  commit_term: number;
  commit_index: number;
}

/** An authority as every member agreed on it after healing: home, epoch, audit (oldest first). */
export interface HealedAuthority {
  home: string;
  epoch: number;
  audit: AuditRecord[];
}

/**
 * The authority invariants over one run's history and the healed, converged state (every
 * member's audit already equal: each committed move is audited on every voter):
 * - one committed move per key, and epochs strictly increase with the commit position; the
 *   healed home and epoch are those of the last move;
 * - a transfer that answered 200 is in the audit with the epoch it answered; a cancel that
 *   answered 204 called off every transfer of that authority in flight at that member: none of
 *   them is in the audit;
 * - every acknowledged write was acknowledged by the home of the epoch it carries, and none was
 *   acknowledged under an older epoch once a move to a newer one had answered;
 * - no acknowledged write missing at the new home: every write the source acknowledged before a
 *   transfer was requested is covered by that move's barrier (the caller checks that the target
 *   applied the source's feed through the barrier).
 */
export function checkAuthorityHistory(
  log: OperationLog,
  healed: Record<string, HealedAuthority>,
  nodes: ReadonlyArray<{ id: string; datacenter: string }>,
  initialHomes: Record<string, string>,
): string[] {
  const problems: string[] = [];
  const transfers = log.of<TransferInput, AuditRecord>('transfer');
  const writes = log.of<WriteInput, WriteOutput>('write').filter((w) => w.outcome === 'ok');
  const cancels = log.of<{ authority: string; at: string }, { status: number }>('cancel');
  const dcOf = new Map(nodes.map((n) => [n.id, n.datacenter]));

  for (const [authority, view] of Object.entries(healed)) {
    const ids = new Set<string>();
    let previous: AuditRecord | undefined;
    const homeAt = new Map<number, string>([[1, initialHomes[authority]]]);
    for (const record of view.audit) {
      if (ids.has(record.id)) problems.push(`${authority}: move ${record.id} committed twice`);
      ids.add(record.id);
      if (previous && record.epoch <= previous.epoch) {
        problems.push(
          `${authority}: epoch ${record.epoch} of move ${record.id} does not exceed ${previous.epoch} of the earlier move ${previous.id}`,
        );
      }
      if (previous && record.source !== previous.target)
        problems.push(
          `${authority}: move ${record.id} left ${record.source}, but the previous move put it in ${previous.target}`,
        );
      homeAt.set(record.epoch, record.target);
      previous = record;
    }
    const last = view.audit[view.audit.length - 1];
    if (last && (view.home !== last.target || view.epoch !== last.epoch)) {
      problems.push(
        `${authority}: healed at ${view.home} epoch ${view.epoch}, but the last committed move put it in ${last.target} at epoch ${last.epoch}`,
      );
    }
    const committed = new Map(view.audit.map((r) => [r.id, r]));

    for (const t of transfers.filter((t) => t.input.authority === authority)) {
      const record = committed.get(t.input.id);
      if (t.outcome === 'ok' && (!record || record.epoch !== t.output!.epoch)) {
        problems.push(
          `${authority}: transfer ${t.input.id} answered committed at epoch ${t.output!.epoch}, but the audit holds ${record ? `epoch ${record.epoch}` : 'no such move'}`,
        );
      }
      if (t.outcome === 'fail' && record)
        problems.push(
          `${authority}: transfer ${t.input.id} was refused (${t.detail}) but committed`,
        );
    }
    for (const c of cancels.filter(
      (c) => c.input.authority === authority && c.outcome === 'ok' && c.output!.status === 204,
    )) {
      const calledOff = transfers.filter(
        (t) =>
          t.input.authority === authority &&
          t.input.at === c.input.at &&
          t.invokeSeq < c.invokeSeq &&
          (t.completeSeq === undefined || t.completeSeq > c.invokeSeq),
      );
      for (const t of calledOff) {
        if (committed.has(t.input.id))
          problems.push(
            `${authority}: a cancel at ${c.input.at} answered 204 while transfer ${t.input.id} was in flight there, yet it committed`,
          );
      }
    }

    for (const w of writes.filter((w) => w.input.authority === authority)) {
      const home = homeAt.get(w.output!.epoch);
      const dc = dcOf.get(w.input.member);
      if (home !== undefined && home !== dc) {
        problems.push(
          `${authority}: write ${w.input.operation} was acknowledged by ${w.input.member} (${dc}) under epoch ${w.output!.epoch}, whose home is ${home}`,
        );
      }
      for (const record of view.audit) {
        const move = transfers.find((t) => t.input.id === record.id && t.outcome === 'ok');
        if (move && record.epoch > w.output!.epoch && move.completeSeq! < w.invokeSeq) {
          problems.push(
            `${authority}: write ${w.input.operation} was finalised under epoch ${w.output!.epoch} after move ${record.id} to epoch ${record.epoch} had answered`,
          );
        }
      }
    }
    for (const record of view.audit) {
      const move = transfers.find((t) => t.input.id === record.id);
      if (!move) continue;
      const before = writes.filter(
        (w) =>
          w.input.authority === authority &&
          dcOf.get(w.input.member) === record.source &&
          w.output!.epoch === record.epoch - 1 &&
          w.completeSeq! < move.invokeSeq,
      );
      for (const w of before) {
        if (w.output!.serial > record.barrier) {
          problems.push(
            `${authority}: write ${w.input.operation} (serial ${w.output!.serial}) was acknowledged at ${record.source} before move ${record.id} was requested, but its barrier is ${record.barrier}`,
          );
        }
      }
    }
  }
  return [...new Set(problems)];
}
