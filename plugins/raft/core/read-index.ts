import type { MemberId } from '@baton/contracts';

/** @internal */
export interface PendingRead {
  from: MemberId;
  index: number;
  context: string;
}

/**
 * The leader's bookkeeping for ReadIndex: each read gets a sequence number, heartbeats carry
 * the latest one, and a follower's answer acknowledges every read up to the number it echoes.
 * A read is confirmed once a quorum (the leader included) acknowledged a heartbeat sent after
 * the read arrived: at that moment no other leader can have committed anything newer.
 *
 * @internal
 */
export class ReadIndexTracker {
  private seq = 0;
  private pending: { seq: number; read: PendingRead }[] = [];
  private acks = new Map<MemberId, number>();

  /** Registers a read; the leader acknowledges it at once. Returns its sequence number. */
  add(read: PendingRead, self: MemberId): number {
    const seq = ++this.seq;
    this.pending.push({ seq, read });
    this.acks.set(self, seq);
    return seq;
  }

  lastSeq(): number {
    return this.pending.length > 0 ? this.seq : 0;
  }

  /** Records an echo; returns the reads now confirmed by a quorum, oldest first. */
  ack(from: MemberId, seq: number, voters: readonly MemberId[], quorum: number): PendingRead[] {
    if (this.pending.length === 0) return [];
    this.acks.set(from, Math.max(this.acks.get(from) ?? 0, seq));
    const acked = voters.map((v) => this.acks.get(v) ?? 0).sort((a, b) => b - a);
    const confirmedSeq = acked[quorum - 1] ?? 0;
    let n = 0;
    while (n < this.pending.length && this.pending[n].seq <= confirmedSeq) n++;
    return this.pending.splice(0, n).map((p) => p.read);
  }

  /** Leadership changed: pending reads are dropped (their callers time out and retry). */
  reset(): void {
    this.pending = [];
    this.acks.clear();
  }
}
