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
 * - a transfer that answered 200 is in the audit with the epoch it answered; a key every
 *   attempt of which was refused is not (a key may be sent again at another member after an
 *   unknown outcome: the one registration decides for all its attempts);
 * - a cancel that answered 204 at the member driving a transfer (where it was POSTed) called it
 *   off: it is not in the audit; a cancel answered 204 elsewhere released some transfer: one
 *   invoked before the cancel completed is not in the audit;
 * - every acknowledged write was acknowledged by the home of the epoch it carries, and none was
 *   acknowledged under an older epoch once a move to a newer one had answered;
 * - no acknowledged write missing at the new home, none finalised under an old epoch: every
 *   write the source acknowledged under the epoch a move ended, whenever it was acknowledged
 *   (before the request, or between it and the commit: the freeze), is within that move's
 *   barrier (the caller checks that the target applied the source's feed through it).
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

    const mine = transfers.filter((t) => t.input.authority === authority);
    for (const t of mine) {
      const record = committed.get(t.input.id);
      if (t.outcome === 'ok' && (!record || record.epoch !== t.output!.epoch)) {
        problems.push(
          `${authority}: transfer ${t.input.id} answered committed at epoch ${t.output!.epoch}, but the audit holds ${record ? `epoch ${record.epoch}` : 'no such move'}`,
        );
      }
      const attempts = mine.filter((a) => a.input.id === t.input.id);
      if (t.outcome === 'fail' && record && attempts.every((a) => a.outcome === 'fail'))
        problems.push(
          `${authority}: transfer ${t.input.id} was refused (${attempts.map((a) => `${a.input.at}: ${a.detail}`).join('; ')}) but committed`,
        );
    }
    const released = cancels.filter(
      (c) => c.input.authority === authority && c.outcome === 'ok' && c.output!.status === 204,
    );
    for (const c of released) {
      const calledOff = mine.filter(
        (t) =>
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
      // Nothing driven there: the cancel went through consensus and released some transfer.
      const before = mine.filter((t) => t.invokeSeq < c.completeSeq!);
      if (
        calledOff.length === 0 &&
        before.length > 0 &&
        before.every((t) => committed.has(t.input.id))
      )
        problems.push(
          `${authority}: a cancel at ${c.input.at} answered 204 (released a transfer), yet every transfer asked for before it committed (${before.map((t) => t.input.id).join(', ')})`,
        );
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
    view.audit.forEach((record, i) => {
      const ended = i === 0 ? -Infinity : view.audit[i - 1].epoch;
      const underOld = writes.filter(
        (w) =>
          w.input.authority === authority &&
          dcOf.get(w.input.member) === record.source &&
          w.output!.epoch < record.epoch &&
          w.output!.epoch >= ended,
      );
      for (const w of underOld) {
        if (w.output!.serial > record.barrier) {
          problems.push(
            `${authority}: write ${w.input.operation} (serial ${w.output!.serial}) was acknowledged at ${record.source} under epoch ${w.output!.epoch}, but move ${record.id} to epoch ${record.epoch} has barrier ${record.barrier}: missing at the new home`,
          );
        }
      }
    });
  }
  problems.push(...checkRefusalsTookNoSerial(log));
  return [...new Set(problems)];
}

/**
 * Writes refused (the freeze's 503, a stale epoch, not home) are refusals, not losses: a
 * member's feed hands out serials 1, 2, 3... without gaps, so the serials missing between the
 * ones it acknowledged can only belong to writes whose outcome is unknown. A refused write that
 * took a serial anyway shows as one gap too many.
 */
export function checkRefusalsTookNoSerial(log: OperationLog): string[] {
  const problems: string[] = [];
  const writes = log.of<WriteInput, WriteOutput>('write');
  for (const member of new Set(writes.map((w) => w.input.member))) {
    const at = writes.filter((w) => w.input.member === member);
    const serials = new Set(at.filter((w) => w.outcome === 'ok').map((w) => w.output!.serial));
    if (serials.size === 0) continue;
    const top = Math.max(...serials);
    const gaps = top - serials.size;
    const unknown = at.filter((w) => w.outcome === 'unknown').length;
    if (gaps > unknown) {
      const refused = at.filter((w) => w.outcome === 'fail').length;
      problems.push(
        `${member}: its feed skipped ${gaps} serials below ${top} that no acknowledged write holds, but only ${unknown} writes there had an unknown outcome: some of its ${refused} refused writes took a serial`,
      );
    }
  }
  return problems;
}

/**
 * Every committed move audited on every voter: `audits` is each member's audit of each
 * authority after healing (record ids); a move any member holds must be on all of them.
 */
export function checkAuditedEverywhere(
  audits: Record<string, Record<string, string[] | undefined>>,
): string[] {
  const problems: string[] = [];
  const members = Object.keys(audits);
  const authorities = new Set(members.flatMap((m) => Object.keys(audits[m])));
  for (const authority of authorities) {
    const all = new Set(members.flatMap((m) => audits[m][authority] ?? []));
    for (const member of members) {
      const held = audits[member][authority];
      if (held === undefined) {
        problems.push(`${authority}: ${member} did not answer for its audit after healing`);
        continue;
      }
      const missing = [...all].filter((id) => !held.includes(id));
      if (missing.length > 0)
        problems.push(
          `${authority}: committed move(s) ${missing.join(', ')} not audited on ${member}`,
        );
    }
  }
  return problems;
}
