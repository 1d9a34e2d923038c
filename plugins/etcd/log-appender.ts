import type { Etcd3, ITxnResponse } from 'etcd3';
import type { Clock, Logger, Rng } from '@baton/contracts';
import {
  appendTransaction,
  ownRun,
  proposalIdOf,
  refusalOf,
  type BatchEntry,
} from './append-transaction.js';
import { certainlyNotSent, describeEtcdError, requestTooLarge } from './etcd-errors.js';
import { decodeClaim, type IdempotencyClaim } from './log-entry.js';
import { jittered } from './jitter.js';
import type { LogKeys } from './log-keys.js';
import { waitUntil } from './wait-until.js';

export interface AppendRequest extends BatchEntry {
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
  | { kind: 'not_appended'; reason: 'no_leader' | 'queue_saturated' | 'stopped' | 'invalid_command'; detail: string }
  /** Maybe in the log (an attempt whose answer was lost). */
  | { kind: 'unknown'; reason: 'timeout' | 'aborted' | 'stopped'; detail: string };

export interface AppenderSettings {
  requestTimeoutMs: number;
  retryMinMs: number;
  retryMaxMs: number;
  /** At most this many entries go into one transaction (etcd's --max-txn-ops bounds the operations). */
  maxBatchEntries: number;
  /** Entries join a transaction while their encoded size stays under this (etcd's request bound is 1.5 MiB). */
  maxBatchBytes: number;
}

interface Pending {
  request: AppendRequest;
  bytes: number;
  resolve: (result: AppendResult) => void;
}

/**
 * Appends entries to the log as a group commit: every proposal waiting on this member when etcd
 * answers the previous transaction goes into the next one (within the batch bounds), each at the
 * next sequence number, "if head is still seq-1, write log/seq.. and move head past them (and
 * claim their idempotency keys if free)". Two members can never take one sequence number, and a
 * key is claimed by one entry only. The part that makes errors honest: a batch whose answer was
 * lost is retried at the same sequence number with the same proposal ids, so either that attempt
 * or the retry lands, never both; when the entry found at that number is one of ours, the log
 * from there says which of ours went in; and if another entry took the number meanwhile, the lost
 * attempt provably failed (its compare can never hold again), which turns "maybe" back into "not
 * appended".
 */
export class LogAppender {
  private readonly queue: Pending[] = [];
  private running = false;
  private inFlight = 0;
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
    return this.queue.length + this.inFlight;
  }

  append(request: AppendRequest): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve) => {
      const bytes = Buffer.byteLength(JSON.stringify(request.entry));
      this.queue.push({ request, bytes, resolve });
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let batch = this.nextBatch(); batch.length > 0; batch = this.nextBatch()) {
        this.inFlight = batch.length;
        await this.run(batch).catch((error) => {
          for (const p of batch) p.resolve(internalFailure(error));
        });
        this.inFlight = 0;
      }
    } finally {
      this.running = false;
    }
  }

  /**
   * The oldest waiting proposals that fit one transaction (at least one, however large). Two
   * claims of one key never share a transaction: etcd refuses a transaction that writes a key
   * twice, and the second must see the first's claim to join its decision.
   */
  private nextBatch(): Pending[] {
    let bytes = 0;
    let count = 0;
    const claimed = new Set<string>();
    while (count < this.queue.length && count < this.settings.maxBatchEntries) {
      const { bytes: size, request } = this.queue[count];
      if (count > 0 && bytes + size > this.settings.maxBatchBytes) break;
      if (request.claim && claimed.has(request.claim.key)) break;
      if (request.claim) claimed.add(request.claim.key);
      bytes += size;
      count += 1;
    }
    return this.queue.splice(0, count);
  }

  /** Runs one batch until every proposal in it has its answer. */
  private async run(batch: Pending[]): Promise<void> {
    let live = [...batch];
    let seq = Math.max(this.nextSeq, this.appliedSeq() + 1);
    /** Proposal ids sent at `seq` in an attempt whose answer was lost: only a definite answer about `seq` clears this. */
    const doubt = new Set<string>();
    let lastProblem = '';
    /** Why an attempt at `seq` may have landed, for the error that reports the doubt. */
    let doubtWhy = '';
    let delay = this.settings.retryMinMs;
    const answer = (p: Pending, result: AppendResult) => {
      p.resolve(result);
      live = live.filter((q) => q !== p);
    };
    const answerAll = (result: (p: Pending, index: number) => AppendResult) => {
      for (const [i, p] of live.entries()) p.resolve(result(p, i));
      live = [];
    };
    for (;;) {
      if (live.length === 0) return;
      const now = this.clock.now();
      if (this.stop.aborted) {
        return answerAll((p) =>
          doubt.has(p.request.entry.id)
            ? { kind: 'unknown', reason: 'stopped', detail: `the member stopped while entry ${seq} was in doubt` }
            : { kind: 'not_appended', reason: 'stopped', detail: 'the member stopped before the entry was appended' },
        );
      }
      for (const p of live) {
        if (p.request.signal?.aborted) answer(p, { kind: 'unknown', reason: 'aborted', detail: 'the signal was aborted' });
        else if (now >= p.request.deadline) answer(p, this.expired(doubt.has(p.request.entry.id), seq, doubtWhy, lastProblem));
      }
      if (live.length === 0) return;
      const deadline = Math.min(...live.map((p) => p.request.deadline));
      const sent = live;
      let response: ITxnResponse;
      try {
        const term = this.currentTerm();
        for (const p of live) p.request.entry.term = Math.max(p.request.entry.term, term);
        response = await appendTransaction(
          this.client,
          this.keys,
          seq,
          sent.map((p) => p.request),
          Math.min(deadline, now + this.settings.requestTimeoutMs),
        );
      } catch (error) {
        lastProblem = describeEtcdError(error);
        if (requestTooLarge(error)) {
          // Refused before etcd proposed it: nothing of this attempt is in the log, and the same
          // bytes will be refused however often they are sent. A batch is split (the rest go in
          // later transactions); one entry alone is answered now. An earlier attempt whose answer
          // was lost keeps its doubt.
          if (live.length > 1 && !live.some((p) => doubt.has(p.request.entry.id))) {
            this.queue.unshift(...live.splice(1));
            this.inFlight = 1;
            continue;
          }
          if (live.length === 1) {
            const detail = `etcd refused log entry ${seq} for its size (${lastProblem}): raise etcd's --max-request-bytes above maxEntryBytes, or keep commands smaller`;
            answer(
              live[0],
              doubt.size > 0
                ? { kind: 'unknown', reason: 'timeout', detail: `${detail}; an earlier attempt may have been committed (${doubtWhy})` }
                : { kind: 'not_appended', reason: 'invalid_command', detail },
            );
            continue;
          }
        }
        if (!certainlyNotSent(error)) {
          for (const p of live) doubt.add(p.request.entry.id);
          doubtWhy = lastProblem;
        }
        this.unreachable = lastProblem;
        this.logger.debug({ seq, entries: live.length, uncertain: doubt.size > 0, error: lastProblem }, 'append attempt failed; retrying');
        await waitUntil(this.clock.sleep(jittered(delay, this.rng)), { clock: this.clock, deadline, stop: this.stop });
        delay = Math.min(this.settings.retryMaxMs, delay * 2);
        continue;
      }
      this.unreachable = undefined;
      delay = this.settings.retryMinMs;
      if (response.succeeded) {
        const revision = Number(response.header.revision);
        this.nextSeq = seq + live.length;
        return answerAll((_, i) => ({ kind: 'appended', seq: seq + i, revision }));
      }
      const refused = refusalOf(response, sent.map((p) => p.request));
      const holder = refused.atFirst && proposalIdOf(refused.atFirst);
      if (holder !== undefined && doubt.has(holder)) {
        // An attempt whose answer was lost did land: the log from `seq` says which of ours it held.
        try {
          const landed = await ownRun(this.client, this.keys, seq, doubt, Math.min(deadline, now + this.settings.requestTimeoutMs));
          for (const [i, id] of landed.ids.entries()) {
            const p = live.find((q) => q.request.entry.id === id);
            if (p) answer(p, { kind: 'appended', seq: seq + i, revision: landed.revision });
          }
          seq += landed.ids.length;
          this.nextSeq = seq;
          doubt.clear();
        } catch (error) {
          lastProblem = describeEtcdError(error);
        }
        continue;
      }
      if (doubt.size > 0 && !refused.atFirst && refused.head >= seq) {
        // The entry at `seq` is gone (compacted) before we could see whose it was.
        for (const p of [...live]) {
          if (doubt.has(p.request.entry.id))
            answer(p, { kind: 'unknown', reason: 'timeout', detail: `log entry ${seq} was compacted before this member could tell whether it was its own` });
        }
        doubt.clear();
      }
      this.settleClaims(sent.filter((p) => live.includes(p)), refused.claims.filter((_, i) => live.includes(sent[i])), answer);
      if (refused.head >= seq) {
        // Another entry holds `seq`: nothing of ours is there, and no lost attempt can land there.
        doubt.clear();
        seq = refused.head + 1;
        this.nextSeq = seq;
      }
    }
  }

  /**
   * Claims another entry holds end their proposal; an expired or malformed claim is replaced on
   * the next attempt. `claims[i]` is what etcd holds under `live[i]`'s key.
   */
  private settleClaims(
    live: Pending[],
    claims: ReturnType<typeof refusalOf>['claims'],
    answer: (p: Pending, result: AppendResult) => void,
  ): void {
    for (const [i, p] of live.entries()) {
      const claim = p.request.claim;
      const kv = claims[i];
      if (!claim) continue;
      if (kv && Number(kv.mod_revision) !== claim.replaceModRevision) {
        const held = decodeClaim(kv.value);
        if (held?.id === p.request.entry.id) answer(p, { kind: 'appended', seq: held.seq, revision: Number(kv.mod_revision) });
        else if (held) answer(p, { kind: 'claimed', claim: held, modRevision: Number(kv.mod_revision) });
        else {
          this.logger.warn({ key: claim.key }, 'an idempotency claim under the prefix is malformed; replacing it');
          p.request.claim = { ...claim, replaceModRevision: Number(kv.mod_revision) };
        }
      } else if (!kv && claim.replaceModRevision !== undefined) {
        // The expired claim was pruned meanwhile: claim the free key instead.
        p.request.claim = { key: claim.key, fingerprint: claim.fingerprint };
      }
    }
  }

  /** The answer to a proposal whose deadline passed before etcd took it. */
  private expired(inDoubt: boolean, seq: number, doubtWhy: string, lastProblem: string): AppendResult {
    if (inDoubt) {
      return {
        kind: 'unknown',
        reason: 'timeout',
        detail: `an attempt at log entry ${seq} may have been committed: its answer was lost (${doubtWhy}); etcd was not reachable since to tell (${lastProblem})`,
      };
    }
    const problem = lastProblem || this.unreachable;
    return problem === undefined
      ? { kind: 'not_appended', reason: 'queue_saturated', detail: 'the deadline passed while the proposal waited its turn to be sent' }
      : { kind: 'not_appended', reason: 'no_leader', detail: `etcd did not take the entry in time: ${problem}` };
  }
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
