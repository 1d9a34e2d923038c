import type { Etcd3, IKeyValue, ITxnResponse } from 'etcd3';
import type { Clock, Logger, Rng } from '@baton/contracts';
import { certainlyNotSent, describeEtcdError } from './etcd-errors.js';
import {
  decodeClaim,
  decodeEntry,
  encodeEntry,
  type CommandEntry,
  type IdempotencyClaim,
  type VoterEntry,
} from './log-entry.js';
import { jittered } from './jitter.js';
import type { LogKeys } from './log-keys.js';
import { waitUntil } from './wait-until.js';

export interface AppendRequest {
  entry: CommandEntry | VoterEntry;
  /** Claim an idempotency key in the same transaction as the entry. */
  claim?: {
    key: string;
    fingerprint: string;
    /** Replace an expired claim, if it is still at this mod revision (else: claim a free key). */
    replaceModRevision?: number;
  };
  /** Clock time after which the append gives up. */
  deadline: number;
  signal?: AbortSignal;
}

export type AppendResult =
  /** The entry is in the log at `seq` (committed at etcd revision `revision`). */
  | { kind: 'appended'; seq: number; revision: number }
  /** The key is claimed by another entry; nothing was appended. */
  | { kind: 'claimed'; claim: IdempotencyClaim; modRevision: number }
  /** Certainly not in the log, and never will be. */
  | { kind: 'not_appended'; reason: 'no_leader' | 'queue_saturated' | 'stopped'; detail: string }
  /** Maybe in the log (an attempt whose answer was lost). */
  | { kind: 'unknown'; reason: 'timeout' | 'aborted' | 'stopped'; detail: string };

export interface AppenderSettings {
  requestTimeoutMs: number;
  retryMinMs: number;
  retryMaxMs: number;
}

/**
 * Appends entries to the log, one transaction at a time, each claiming the next sequence number:
 * "if head is still seq-1, write log/seq and move head to seq (and claim the idempotency key if
 * it is free)". Two members can never take one sequence number, and a key is claimed by one
 * entry only. The part that makes errors honest: an attempt whose answer was lost is retried at
 * the same sequence number with the same proposal id, so either that attempt or the retry lands,
 * never both; and if another entry took the number meanwhile, the lost attempt provably failed
 * (its compare can never hold again), which turns "maybe" back into "not appended".
 */
export class LogAppender {
  private readonly queue: Array<() => Promise<void>> = [];
  private running = false;
  private nextSeq = 1;
  /** The last failure talking to etcd, while the latest attempts fail; cleared on success. */
  private unreachable?: string;

  constructor(
    private readonly client: Etcd3,
    private readonly keys: LogKeys,
    private readonly settings: AppenderSettings,
    private readonly clock: Clock,
    private readonly rng: Rng,
    private readonly logger: Logger,
    /** The member's applied sequence number: the next entry goes after it at least. */
    private readonly appliedSeq: () => number,
    /** The newest leadership term this member knows: entries carry it (see LogEntry). */
    private readonly currentTerm: () => number,
    private readonly stop: AbortSignal,
  ) {}

  /** How many appends are queued or running. */
  get pending(): number {
    return this.queue.length + (this.running ? 1 : 0);
  }

  append(request: AppendRequest): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve) => {
      this.queue.push(async () => resolve(await this.run(request).catch(internalFailure)));
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let job = this.queue.shift(); job; job = this.queue.shift()) await job();
    } finally {
      this.running = false;
    }
  }

  private async run(request: AppendRequest): Promise<AppendResult> {
    const { entry, deadline, signal } = request;
    let claim = request.claim;
    let seq = Math.max(this.nextSeq, this.appliedSeq() + 1);
    /** An attempt at `seq` may have landed: only a definite answer about `seq` clears this. */
    let uncertain = false;
    let lastProblem = '';
    /** Why an attempt at `seq` may have landed, for the error that reports the doubt. */
    let doubt = '';
    let delay = this.settings.retryMinMs;
    for (;;) {
      const now = this.clock.now();
      if (this.stop.aborted) {
        return uncertain
          ? {
              kind: 'unknown',
              reason: 'stopped',
              detail: `the member stopped while entry ${seq} was in doubt`,
            }
          : {
              kind: 'not_appended',
              reason: 'stopped',
              detail: 'the member stopped before the entry was appended',
            };
      }
      if (signal?.aborted) {
        return { kind: 'unknown', reason: 'aborted', detail: 'the signal was aborted' };
      }
      if (now >= deadline) {
        if (uncertain) {
          return {
            kind: 'unknown',
            reason: 'timeout',
            detail: `an attempt at log entry ${seq} may have been committed: its answer was lost (${doubt}); etcd was not reachable since to tell (${lastProblem})`,
          };
        }
        const problem = lastProblem || this.unreachable;
        return problem === undefined
          ? {
              kind: 'not_appended',
              reason: 'queue_saturated',
              detail: 'the deadline passed while the proposal waited its turn to be sent',
            }
          : {
              kind: 'not_appended',
              reason: 'no_leader',
              detail: `etcd did not take the entry in time: ${problem}`,
            };
      }
      let response: ITxnResponse;
      try {
        entry.term = Math.max(entry.term, this.currentTerm());
        response = await this.attempt(
          seq,
          entry.id,
          encodeEntry(entry),
          claim,
          Math.min(deadline, now + this.settings.requestTimeoutMs),
        );
      } catch (error) {
        lastProblem = describeEtcdError(error);
        if (!certainlyNotSent(error)) {
          uncertain = true;
          doubt = lastProblem;
        }
        this.unreachable = lastProblem;
        this.logger.debug(
          { seq, uncertain, error: lastProblem },
          'append attempt failed; retrying',
        );
        await waitUntil(this.clock.sleep(jittered(delay, this.rng)), {
          clock: this.clock,
          deadline,
          signal,
          stop: this.stop,
        });
        delay = Math.min(this.settings.retryMaxMs, delay * 2);
        continue;
      }
      this.unreachable = undefined;
      delay = this.settings.retryMinMs;
      if (response.succeeded) {
        this.nextSeq = seq + 1;
        return { kind: 'appended', seq, revision: Number(response.header.revision) };
      }
      const [headKv, entryKv, claimKv] = response.responses.map(
        (op) => op.response_range.kvs[0] as IKeyValue | undefined,
      );
      if (entryKv && idOf(entryKv) === entry.id) {
        // An earlier attempt whose answer was lost did land.
        this.nextSeq = seq + 1;
        return { kind: 'appended', seq, revision: Number(entryKv.create_revision) };
      }
      if (claim && claimKv && Number(claimKv.mod_revision) !== claim.replaceModRevision) {
        const held = decodeClaim(claimKv.value);
        if (held?.id === entry.id) {
          return { kind: 'appended', seq: held.seq, revision: Number(claimKv.mod_revision) };
        }
        if (held)
          return { kind: 'claimed', claim: held, modRevision: Number(claimKv.mod_revision) };
        this.logger.warn(
          { key: claim.key },
          'an idempotency claim under the prefix is malformed; replacing it',
        );
        claim = { ...claim, replaceModRevision: Number(claimKv.mod_revision) };
        continue;
      }
      if (claim && !claimKv && claim.replaceModRevision !== undefined) {
        // The expired claim was pruned meanwhile: claim the free key instead.
        claim = { key: claim.key, fingerprint: claim.fingerprint };
      }
      const head = headKv ? Number(headKv.value.toString('utf8')) : 0;
      if (uncertain && !entryKv && head >= seq) {
        // The entry at `seq` is gone (compacted) before we could see whose it was.
        return {
          kind: 'unknown',
          reason: 'timeout',
          detail: `log entry ${seq} was compacted before this member could tell whether it was its own`,
        };
      }
      // Another entry holds `seq` (or our guess was stale): ours is not there and cannot land there.
      uncertain = false;
      seq = Math.max(seq, head + 1);
      this.nextSeq = seq;
    }
  }

  private attempt(
    seq: number,
    id: string,
    bytes: string,
    claim: AppendRequest['claim'],
    deadline: number,
  ): Promise<ITxnResponse> {
    let txn = this.client.if(this.keys.head, 'Value', '==', String(seq - 1));
    const writes = [
      this.client.put(this.keys.entry(seq)).value(bytes),
      this.client.put(this.keys.head).value(String(seq)),
    ];
    const reads = [this.client.get(this.keys.head), this.client.get(this.keys.entry(seq))];
    if (claim) {
      const key = this.keys.idem(claim.key);
      txn =
        claim.replaceModRevision === undefined
          ? txn.and(key, 'Version', '==', 0)
          : txn.and(key, 'Mod', '==', claim.replaceModRevision);
      const value: IdempotencyClaim = { seq, id, fingerprint: claim.fingerprint };
      writes.push(this.client.put(key).value(JSON.stringify(value)));
      reads.push(this.client.get(key));
    }
    return txn
      .then(...writes)
      .else(...reads)
      .options({ deadline: new Date(deadline) })
      .commit();
  }
}

function idOf(kv: IKeyValue): string | undefined {
  const entry = decodeEntry(kv.value);
  return 'id' in entry ? entry.id : undefined;
}

/**
 * A bug inside the append loop must still answer the proposal, and must not claim "not
 * appended": an attempt may have been sent before it.
 */
function internalFailure(error: unknown): AppendResult {
  return {
    kind: 'unknown',
    reason: 'timeout',
    detail: `internal error while appending: ${String(error)}`,
  };
}
