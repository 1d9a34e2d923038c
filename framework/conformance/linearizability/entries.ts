import type { Operation } from './history.js';

/**
 * The call and return events of a history as a doubly linked list in time order, as in
 * Porcupine: linearizing an operation lifts its two entries out of the list, backtracking puts
 * them back in the reverse order (each entry remembers its neighbours), so neither costs more
 * than a few pointer writes.
 */
export interface Entry {
  kind: 'call' | 'return';
  op: number;
  time: number;
  prev: Entry | null;
  next: Entry | null;
  /** For a call: its return entry, if the operation returned. */
  match: Entry | null;
}

/** The entries behind a sentinel head; at equal times calls go first. */
export function buildEntries<I, O>(ops: ReadonlyArray<Operation<I, O>>): Entry {
  const entries: Entry[] = [];
  ops.forEach((op, i) => {
    const call: Entry = { kind: 'call', op: i, time: op.call, prev: null, next: null, match: null };
    entries.push(call);
    if (op.return !== undefined) {
      call.match = { kind: 'return', op: i, time: op.return, prev: null, next: null, match: null };
      entries.push(call.match);
    }
  });
  // Calls before returns at one instant: operations that touch are treated as overlapping,
  // which can only accept more histories, never reject a correct one.
  entries.sort(
    (a, b) => a.time - b.time || (a.kind === b.kind ? a.op - b.op : a.kind === 'call' ? -1 : 1),
  );
  const head: Entry = {
    kind: 'call',
    op: -1,
    time: -Infinity,
    prev: null,
    next: null,
    match: null,
  };
  let last = head;
  for (const e of entries) {
    last.next = e;
    e.prev = last;
    last = e;
  }
  return head;
}

/**
 * The operations that may be linearized next: those called before the first return still in
 * the list (an operation that returned before another was called must come first). Returned
 * operations and unknown-outcome ones (which have no return entry, so stay in the list until
 * the search applies them) come apart: the search treats them differently. Reads come first
 * among the returned: a legal read is the only move worth trying (see the search).
 */
export function window(
  head: Entry,
  readOnly: ReadonlyArray<boolean>,
): {
  returned: Entry[];
  unknown: number[];
} {
  const reads: Entry[] = [];
  const others: Entry[] = [];
  const unknown: number[] = [];
  for (let e = head.next; e !== null && e.kind === 'call'; e = e.next) {
    if (e.match === null) unknown.push(e.op);
    else (readOnly[e.op] ? reads : others).push(e);
  }
  return { returned: reads.concat(others), unknown };
}

/** Takes a returned operation's call and return out of the list. */
export function lift(call: Entry): void {
  unlink(call);
  if (call.match) unlink(call.match);
}

/** Puts back what `lift` took out; calls must be undone in the reverse order of lifting. */
export function unlift(call: Entry): void {
  if (call.match) relink(call.match);
  relink(call);
}

function unlink(e: Entry): void {
  e.prev!.next = e.next;
  if (e.next) e.next.prev = e.prev;
}

function relink(e: Entry): void {
  e.prev!.next = e;
  if (e.next) e.next.prev = e;
}
