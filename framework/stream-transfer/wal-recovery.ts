import type { ProducerMark, StreamId } from './model.js';
import type { BatchStamp, WalEntry } from './wal.js';

/** One stream's last session as the WAL remembers it. */
export interface RecoveredSession {
  stream: StreamId;
  epoch: number;
  status: 'open' | 'closed' | 'settled';
  /** Offset after the last logged record (the tail once everything logged is flushed). */
  next: number;
  /** Offsets below this are known to be in the object store. */
  flushedUpTo: number;
  producers: Record<string, ProducerMark>;
  /** Logged records at or above `flushedUpTo`, in offset order, contiguous from it. */
  unflushed: { first: number; bodies: string[]; stamps?: BatchStamp[]; slot?: number }[];
}

/**
 * Folds the WAL into the last session of each stream. Entries of an older epoch than one
 * already seen are ignored (a session at a later epoch supersedes them). Records are kept only
 * while contiguous from the open offset: the session assigns offsets in order and logs them in
 * order, so a gap can only follow a lost write, and nothing past it was ever acknowledged.
 */
export function recoverSessions(entries: readonly WalEntry[]): Map<StreamId, RecoveredSession> {
  const sessions = new Map<StreamId, RecoveredSession>();
  for (const entry of entries) {
    let session = sessions.get(entry.stream);
    if (session && entry.epoch < session.epoch) continue;
    if (entry.t === 'open') {
      if (session && session.epoch === entry.epoch) continue;
      session = {
        stream: entry.stream,
        epoch: entry.epoch,
        status: 'open',
        next: entry.next,
        flushedUpTo: entry.next,
        producers: { ...entry.producers },
        unflushed: [],
      };
      sessions.set(entry.stream, session);
      continue;
    }
    if (!session || session.epoch !== entry.epoch) {
      if (entry.t === 'closed') {
        sessions.set(entry.stream, {
          stream: entry.stream,
          epoch: entry.epoch,
          status: 'closed',
          next: entry.tail,
          flushedUpTo: entry.tail,
          producers: { ...entry.producers },
          unflushed: [],
        });
      }
      continue;
    }
    switch (entry.t) {
      case 'records':
        if (entry.first !== session.next) continue;
        session.unflushed.push({ first: entry.first, bodies: entry.bodies, stamps: entry.stamps, ...(entry.slot ? { slot: entry.slot } : {}) });
        session.next += entry.bodies.length;
        for (const stamp of entry.stamps ?? []) {
          session.producers[stamp.id] = { seq: stamp.seq, first: stamp.first, count: stamp.count };
        }
        break;
      case 'flushed':
        session.flushedUpTo = Math.max(session.flushedUpTo, Math.min(entry.upTo, session.next));
        session.unflushed = session.unflushed.filter((r) => r.first + r.bodies.length > session!.flushedUpTo);
        break;
      case 'closed':
        session.status = 'closed';
        session.next = entry.tail;
        session.flushedUpTo = entry.tail;
        session.producers = { ...entry.producers };
        session.unflushed = [];
        break;
      case 'settled':
        session.status = 'settled';
        session.unflushed = [];
        break;
    }
  }
  return sessions;
}
