import {
  NotAppendedError,
  OutcomeUnknownError,
  type Receipt,
} from '@baton/contracts';
import type { Deadline, Deadlines, Expirable } from './deadlines.js';

/** Someone waiting for the entry at one log index to be applied. */
export interface Waiter {
  /** Index of the entry it waits for. */
  index: number;
  /** Term of the entry it waits for: another term at that index means leadership was lost. */
  term: number;
  /** Joined an entry another proposal appended: its answer is a replay of that decision. */
  joined: boolean;
  /** The next waiter on the same index (a retry that joined it), if any. */
  next: Waiter | undefined;
  succeed(receipt: Receipt<unknown>): void;
  fail(error: Error): void;
}

/**
 * One proposal or membership change at this member, from submission to its single answer: the
 * entry applied, its deadline, an abort, leadership lost or a stop, whichever comes first. A
 * class rather than a handful of closures per proposal, because thousands are in flight at once.
 * Before the entry is appended a timeout or abort means it was never appended; after, that the
 * outcome is unknown.
 */
export class PendingProposal implements Waiter, Expirable {
  index = 0;
  term = 0;
  joined = false;
  next: Waiter | undefined = undefined;
  appended = false;
  private done = false;
  private readonly deadline: Deadline;
  private readonly onAbort: (() => void) | undefined;

  constructor(
    private readonly what: string,
    private readonly timeoutMs: number,
    private readonly deadlines: Deadlines,
    now: number,
    private readonly signal: AbortSignal | undefined,
    private readonly resolve: (
      outcome: Receipt<unknown> | 'retry' | PromiseLike<Receipt<unknown>>,
    ) => void,
    private readonly reject: (error: Error) => void,
    /** Told once, when the proposal is answered. */
    private readonly release: () => void,
    /**
     * Where the proposal goes when this member turned out not to lead (nothing was appended);
     * without it the answer is 'retry' and the caller looks for the leader itself.
     */
    private readonly elsewhere?: (p: PendingProposal) => Promise<Receipt<unknown>>,
    /** The command, its idempotency key and fingerprint, for `elsewhere` and the append. */
    readonly command?: unknown,
    readonly key?: string,
    readonly fingerprint?: string,
  ) {
    this.deadline = deadlines.add(now + timeoutMs, this);
    if (signal) {
      this.onAbort = () => this.abort();
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  get settled(): boolean {
    return this.done;
  }

  succeed(receipt: Receipt<unknown>): void {
    if (this.finish()) this.resolve(receipt);
  }

  fail(error: Error): void {
    if (this.finish()) this.reject(error);
  }

  /** Not appended because this member does not lead: the caller looks for the leader. */
  retry(): void {
    if (this.finish()) this.resolve(this.elsewhere ? this.elsewhere(this) : 'retry');
  }

  /** When the proposal's time is up. */
  get deadlineAt(): number {
    return this.deadline.at;
  }

  expire(): void {
    this.fail(
      this.appended
        ? new OutcomeUnknownError('timeout', `${this.what} not applied within ${this.timeoutMs} ms`)
        : new NotAppendedError(
            'no_leader',
            `${this.what} not appended within ${this.timeoutMs} ms`,
          ),
    );
  }

  private abort(): void {
    this.fail(
      new OutcomeUnknownError(
        'aborted',
        this.appended
          ? 'aborted after the proposal was appended'
          : 'aborted before the proposal was appended',
      ),
    );
  }

  private finish(): boolean {
    if (this.done) return false;
    this.done = true;
    this.deadlines.cancel(this.deadline);
    if (this.onAbort) this.signal!.removeEventListener('abort', this.onAbort);
    this.release();
    return true;
  }
}

/**
 * Who waits for which log index. A proposal appended here waits on a new, higher index each
 * time, so those waiters form a queue in index order and are taken from its front as entries
 * apply, without a map entry each; only retries that join an entry already in the log (any
 * index) go to a map.
 */
export class Waiters {
  private readonly queue: Waiter[] = [];
  private head = 0;
  private readonly joined = new Map<number, Waiter>();

  add(index: number, term: number, w: Waiter): void {
    w.index = index;
    w.term = term;
    w.next = undefined;
    const q = this.queue;
    if (this.head === q.length || q[q.length - 1].index < index) {
      q.push(w);
      return;
    }
    w.next = this.joined.get(index);
    this.joined.set(index, w);
  }

  /** Everyone waiting for `index`, as a list through `next`; forgets them. */
  take(index: number): Waiter | undefined {
    const q = this.queue;
    // Indexes passed over without being applied here (a snapshot replaced them) have no answer
    // to give: their waiters are left to their deadlines.
    while (this.head < q.length && q[this.head].index < index) this.head++;
    let first: Waiter | undefined;
    if (this.head < q.length && q[this.head].index === index) first = q[this.head++];
    if (this.head === q.length) {
      q.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= q.length) {
      q.splice(0, this.head);
      this.head = 0;
    }
    const joined = this.joined.size > 0 ? this.joined.get(index) : undefined;
    if (joined === undefined) return first;
    this.joined.delete(index);
    if (first === undefined) return joined;
    first.next = joined;
    return first;
  }

  /** Every waiter, forgotten. */
  clear(): Waiter[] {
    const all: Waiter[] = [];
    for (let i = this.head; i < this.queue.length; i++) all.push(this.queue[i]);
    for (const head of this.joined.values()) {
      for (let w: Waiter | undefined = head; w; w = w.next) all.push(w);
    }
    this.queue.length = 0;
    this.head = 0;
    this.joined.clear();
    return all;
  }
}
