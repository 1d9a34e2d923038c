import {
  NotAppendedError,
  OutcomeUnknownError,
  type Receipt,
} from '../../../framework/contracts/metadata-consensus.js';
import type { Deadline, Deadlines, Expirable } from './deadlines.js';

/** Someone waiting for the entry at one log index to be applied. */
export interface Waiter {
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
    /** The command, for `elsewhere`. */
    readonly command?: unknown,
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
