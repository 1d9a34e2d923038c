import type { Logger, MemberId, PeerTransport } from '@baton/contracts';
import type { Message, Snapshot, SnapshotMeta } from '../core/types.js';
import { piecesOf } from '../storage/snapshot-image.js';

/**
 * Channel of snapshot transfers: a leader's chunks to a follower, the follower's acks back.
 * A Raft 'snap' message never travels whole: a snapshot of a large state would be one huge
 * message, serialised, sent and parsed while both event loops wait.
 */
export const SNAPSHOT_CHANNEL = 'raft-snapshot';

/** Chunks a leader keeps unacknowledged per follower: bounds what one transfer queues. */
export const SNAPSHOT_WINDOW = 4;

/**
 * One piece of a snapshot, leader to follower. `piece` is absent only for an image with none.
 * `attempt` numbers the leader's transfers, so a follower tells a restarted transfer from a
 * duplicated first chunk.
 */
export interface SnapshotChunk {
  cluster: string;
  kind: 'chunk';
  term: number;
  attempt: number;
  meta: SnapshotMeta;
  seq: number;
  last: boolean;
  piece?: unknown;
}

/**
 * Follower to leader: every chunk up to `seq` was taken (cumulative, as TCP acks); `done` once
 * the follower's Raft has the snapshot (the leader forgets the transfer), `restart` when the
 * follower knows nothing of the transfer (it restarted).
 */
export interface SnapshotAck {
  cluster: string;
  kind: 'ack';
  term: number;
  attempt: number;
  index: number;
  seq: number;
  done?: boolean;
  restart?: boolean;
}

const MAX_VOTERS = 1_000;

const isIndex = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isMember = (v: unknown): v is string =>
  typeof v === 'string' && v.length >= 1 && v.length <= 256;
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A snapshot-channel body checked field by field, or undefined when malformed. */
export function parseSnapshotBody(body: unknown): SnapshotChunk | SnapshotAck | undefined {
  if (!isObject(body) || typeof body.cluster !== 'string' || !isIndex(body.term)) return undefined;
  if (!isIndex(body.seq) || !isIndex(body.attempt)) return undefined;
  if (body.kind === 'chunk') {
    const meta = body.meta;
    if (
      !isObject(meta) ||
      !isIndex(meta.index) ||
      !isIndex(meta.term) ||
      !Array.isArray(meta.voters) ||
      meta.voters.length > MAX_VOTERS ||
      !meta.voters.every(isMember) ||
      typeof body.last !== 'boolean'
    )
      return undefined;
    const chunk: SnapshotChunk = {
      cluster: body.cluster,
      kind: 'chunk',
      term: body.term,
      attempt: body.attempt,
      meta: { index: meta.index, term: meta.term, voters: meta.voters as string[] },
      seq: body.seq,
      last: body.last,
    };
    if ('piece' in body) chunk.piece = body.piece;
    return chunk;
  }
  if (body.kind === 'ack') {
    if (!isIndex(body.index)) return undefined;
    if (body.done !== undefined && typeof body.done !== 'boolean') return undefined;
    if (body.restart !== undefined && typeof body.restart !== 'boolean') return undefined;
    return {
      cluster: body.cluster,
      kind: 'ack',
      term: body.term,
      attempt: body.attempt,
      index: body.index,
      seq: body.seq,
      done: body.done === true ? true : undefined,
      restart: body.restart === true ? true : undefined,
    };
  }
  return undefined;
}

interface OutgoingTransfer {
  to: MemberId;
  term: number;
  attempt: number;
  snapshot: Snapshot;
  pieces: Iterator<unknown>;
  /** The piece after the last one sent (read ahead, to mark the last chunk). */
  ahead: IteratorResult<unknown>;
  sent: number;
  /** Chunks sent and not yet acknowledged, oldest first: resent when acks stop coming. */
  unacked: SnapshotChunk[];
  /** Tick of the last sign of life from the follower. */
  heardAt: number;
  /** Tick the unacknowledged chunks were last sent. */
  sentAt: number;
}

export interface SnapshotSenderHost {
  cluster: string;
  transport: PeerTransport;
  log: Logger;
  stats: { snapshotChunksSent: number };
  /** Unacknowledged chunks are sent again after this many ticks without an ack. */
  resendTicks: number;
  /** A transfer without an ack for this many ticks is given up (the core will ask again). */
  stallTicks: number;
}

/**
 * The leader's side: turns each 'snap' message the core emits into a stream of chunks, one
 * piece each, at most SNAPSHOT_WINDOW unacknowledged (resent when acks stop: the network may
 * lose, repeat and reorder them). Pieces are read from the frozen image only as they are
 * sent, so a transfer never holds the state twice nor blocks for its size.
 * The core asks again for a follower still in snapshot state every election timeout; a
 * transfer still making progress is not restarted for that.
 */
export class SnapshotSender {
  private readonly transfers = new Map<MemberId, OutgoingTransfer>();
  private attempts = 0;

  constructor(private readonly host: SnapshotSenderHost) {}

  offer(m: Message, tick: number): void {
    const snapshot = m.snapshot!;
    const current = this.transfers.get(m.to);
    if (
      current &&
      current.term === m.term &&
      current.snapshot.meta.index === snapshot.meta.index &&
      tick - current.heardAt < this.host.stallTicks
    )
      return;
    this.start(m.to, m.term, snapshot, tick);
  }

  onAck(from: MemberId, ack: SnapshotAck, tick: number): void {
    const t = this.transfers.get(from);
    if (!t || ack.term !== t.term || ack.attempt !== t.attempt || ack.index !== t.snapshot.meta.index)
      return;
    t.heardAt = tick;
    if (ack.done) {
      this.transfers.delete(from);
      return;
    }
    if (ack.restart) {
      this.start(from, t.term, t.snapshot, tick);
      return;
    }
    while (t.unacked.length > 0 && t.unacked[0].seq <= ack.seq) t.unacked.shift();
    this.pump(t, tick);
  }

  /**
   * Forgets transfers of an earlier term (leadership lost) or that stalled, and resends what
   * a follower has not acknowledged for a while.
   */
  tick(tick: number, leaderTerm: number | undefined): void {
    for (const [to, t] of this.transfers) {
      if (t.term !== leaderTerm || tick - t.heardAt >= this.host.stallTicks) {
        this.transfers.delete(to);
        if (t.term === leaderTerm)
          this.host.log.warn(
            { to, index: t.snapshot.meta.index, sent: t.sent, unacked: t.unacked.length },
            'snapshot transfer stalled; it starts again when the follower is probed',
          );
      } else if (t.unacked.length > 0 && tick - t.sentAt >= this.host.resendTicks) {
        t.sentAt = tick;
        for (const chunk of t.unacked) if (!this.transmit(t, chunk)) break;
      }
    }
  }

  inFlight(): number {
    return this.transfers.size;
  }

  private start(to: MemberId, term: number, snapshot: Snapshot, tick: number): void {
    const pieces = piecesOf(snapshot.data)[Symbol.iterator]();
    const t: OutgoingTransfer = {
      to,
      term,
      attempt: ++this.attempts,
      snapshot,
      pieces,
      ahead: pieces.next(),
      sent: 0,
      unacked: [],
      heardAt: tick,
      sentAt: tick,
    };
    this.transfers.set(to, t);
    this.host.log.info(
      { to, index: snapshot.meta.index, term: snapshot.meta.term },
      'sending snapshot to a follower behind the compaction point',
    );
    this.pump(t, tick);
  }

  private pump(t: OutgoingTransfer, tick: number): void {
    while (t.unacked.length < SNAPSHOT_WINDOW) {
      const first = t.sent === 0;
      if (t.ahead.done && !first) return;
      const chunk: SnapshotChunk = {
        cluster: this.host.cluster,
        kind: 'chunk',
        term: t.term,
        attempt: t.attempt,
        meta: t.snapshot.meta,
        seq: t.sent,
        last: false,
      };
      if (!t.ahead.done) {
        chunk.piece = t.ahead.value;
        t.ahead = t.pieces.next();
      }
      chunk.last = t.ahead.done === true;
      t.sent++;
      t.unacked.push(chunk);
      t.sentAt = tick;
      if (!this.transmit(t, chunk) || chunk.last) return;
    }
  }

  private transmit(t: OutgoingTransfer, chunk: SnapshotChunk): boolean {
    this.host.stats.snapshotChunksSent++;
    try {
      this.host.transport.send(t.to, { channel: SNAPSHOT_CHANNEL, body: chunk });
      return true;
    } catch (error) {
      this.host.log.warn({ err: error, to: t.to }, 'a snapshot chunk could not be sent');
      this.transfers.delete(t.to);
      return false;
    }
  }
}

/** What a follower's receiver needs from its member. */
export interface SnapshotReceiverHost<A> {
  cluster: string;
  transport: PeerTransport;
  log: Logger;
  stats: { snapshotChunksReceived: number };
  /** The member's current Raft term: chunks of an earlier term are ignored. */
  term(): number;
  /** The member's commit index: a snapshot at or below it brings nothing. */
  committed(): number;
  /** A fresh assembly of the replicated state. */
  assembly(): { add(piece: unknown): void; finish(): A };
  /** Every piece arrived: the member makes it durable and hands it to its Raft. */
  assembled(from: MemberId, term: number, meta: SnapshotMeta, assembled: A): void;
  /** The snapshot brings nothing new: the member tells its Raft, which answers the leader. */
  stale(from: MemberId, term: number, meta: SnapshotMeta): void;
}

interface IncomingTransfer<A> {
  from: MemberId;
  term: number;
  attempt: number;
  meta: SnapshotMeta;
  next: number;
  /** Chunks that arrived ahead of `next` (the network reorders), at most a window of them. */
  early: Map<number, SnapshotChunk>;
  assembly: { add(piece: unknown): void; finish(): A };
  /** Every piece was taken; the member is installing it. */
  complete: boolean;
}

/**
 * The follower's side: takes chunks in order (holding the few that arrive early), handing each
 * piece to the state's assembly as it arrives (bounded work per message, so the member keeps
 * serving), and acks cumulatively. Only the complete assembly reaches the Raft.
 */
export class SnapshotReceiver<A> {
  private current: IncomingTransfer<A> | undefined;

  constructor(private readonly host: SnapshotReceiverHost<A>) {}

  onChunk(from: MemberId, chunk: SnapshotChunk): void {
    if (chunk.term < this.host.term()) return;
    this.host.stats.snapshotChunksReceived++;
    let t = this.current;
    const same =
      t !== undefined &&
      t.from === from &&
      t.term === chunk.term &&
      t.attempt === chunk.attempt &&
      t.meta.index === chunk.meta.index &&
      t.meta.term === chunk.meta.term;
    if (!same) {
      if (chunk.seq !== 0) {
        // Of a transfer this member knows nothing of (it restarted, or gave it up).
        this.ack(from, chunk, { restart: true });
        return;
      }
      if (chunk.meta.index <= this.host.committed()) {
        this.current = undefined;
        this.ack(from, chunk, { done: true });
        this.host.stale(from, chunk.term, chunk.meta);
        return;
      }
      t = {
        from,
        term: chunk.term,
        attempt: chunk.attempt,
        meta: chunk.meta,
        next: 0,
        early: new Map(),
        assembly: this.host.assembly(),
        complete: false,
      };
      this.current = t;
    }
    const transfer = t!;
    if (transfer.complete || chunk.seq < transfer.next) {
      this.ack(from, chunk, {}, transfer.next - 1);
      return;
    }
    if (chunk.seq > transfer.next) {
      if (chunk.seq - transfer.next <= SNAPSHOT_WINDOW) transfer.early.set(chunk.seq, chunk);
      return;
    }
    for (let c: SnapshotChunk | undefined = chunk; c; c = transfer.early.get(transfer.next)) {
      transfer.early.delete(c.seq);
      if (!this.take(from, transfer, c)) return;
      if (transfer.complete) return;
    }
    this.ack(from, chunk, {}, transfer.next - 1);
  }

  /** One chunk, the next in order. False when the transfer was dropped. */
  private take(from: MemberId, transfer: IncomingTransfer<A>, chunk: SnapshotChunk): boolean {
    try {
      if ('piece' in chunk) transfer.assembly.add(chunk.piece);
    } catch (error) {
      this.current = undefined;
      this.host.log.error(
        { err: error, from, index: chunk.meta.index, seq: chunk.seq },
        'a snapshot piece was refused; the transfer is dropped',
      );
      return false;
    }
    transfer.next++;
    if (!chunk.last) return true;
    transfer.complete = true;
    transfer.early.clear();
    this.ack(from, chunk, {});
    let assembled: A;
    try {
      assembled = transfer.assembly.finish();
    } catch (error) {
      this.current = undefined;
      this.host.log.error({ err: error, from, index: chunk.meta.index }, 'a snapshot could not be assembled');
      return false;
    }
    this.host.assembled(from, transfer.term, transfer.meta, assembled);
    return true;
  }

  /** The Raft took the snapshot at `index` from `from`: the leader may forget the transfer. */
  installed(from: MemberId, term: number, index: number): void {
    const t = this.current;
    if (!t || t.from !== from || t.term !== term || t.meta.index !== index) return;
    this.current = undefined;
    this.send(from, { term, attempt: t.attempt, index, seq: t.next - 1, done: true });
  }

  /** The install was given up (the member stopped or failed to write it). */
  abandon(): void {
    this.current = undefined;
  }

  /** While a complete snapshot is being installed, tells the leader it is not stalled. */
  keepAlive(): void {
    const t = this.current;
    if (t?.complete)
      this.send(t.from, { term: t.term, attempt: t.attempt, index: t.meta.index, seq: t.next - 1 });
  }

  private ack(
    to: MemberId,
    chunk: SnapshotChunk,
    flags: { done?: boolean; restart?: boolean },
    seq = chunk.seq,
  ): void {
    this.send(to, { term: chunk.term, attempt: chunk.attempt, index: chunk.meta.index, seq, ...flags });
  }

  private send(to: MemberId, ack: Omit<SnapshotAck, 'cluster' | 'kind'>): void {
    const body: SnapshotAck = { cluster: this.host.cluster, kind: 'ack', ...ack };
    try {
      this.host.transport.send(to, { channel: SNAPSHOT_CHANNEL, body });
    } catch (error) {
      this.host.log.warn({ err: error, to }, 'a snapshot ack could not be sent');
    }
  }
}
