import type { StateAssembly } from '@baton/contracts';

/**
 * The piece format both variants' captures share: a head piece naming the format, then runs of
 * one kind of record each, in key order. A snapshot of a million records is read out (and sent,
 * and written) piece by piece, each piece bounded work, so no step of it holds the event loop
 * for the whole state.
 */
export interface HeadPiece {
  kind: 'head';
  format: number;
}

export interface RecordsPiece<K extends string, T> {
  kind: K;
  records: T[];
}

/**
 * `records` in pieces of `kind`, each closed once the weights of its records reach `perPiece`
 * (a record's weight: about how much JSON it makes, one by default).
 */
export function* recordPieces<K extends string, T>(
  kind: K,
  records: Iterable<T>,
  perPiece: number,
  weight: (record: T) => number = () => 1,
): IterableIterator<RecordsPiece<K, T>> {
  let batch: T[] = [];
  let size = 0;
  for (const record of records) {
    batch.push(record);
    size += weight(record);
    if (size >= perPiece) {
      yield { kind, records: batch };
      batch = [];
      size = 0;
    }
  }
  if (batch.length > 0) yield { kind, records: batch };
}

export interface PieceReader<S, H extends HeadPiece> {
  /** Names the snapshot in errors: "`what` is malformed: ...". */
  what: string;
  /** The one format this reader takes. */
  format: H['format'];
  /** Takes the head's other fields (read before any record). */
  head?(head: H): void;
  /** Per record kind, takes one piece's records (not yet checked one by one). */
  records: Record<string, (records: unknown[]) => void>;
  finish(): S;
}

/**
 * An assembly of pieces in that format: refuses anything that is not a piece of a known kind,
 * records before the head, a head of another format, or a finish without a head, and hands each
 * piece's records to the reader. A snapshot is written by a member, so a malformed piece is a bug
 * or a corruption: it throws, never guesses around it.
 */
export function readPieces<S, H extends HeadPiece>(reader: PieceReader<S, H>): StateAssembly<S> {
  const malformed = (why: string) => new Error(`${reader.what} is malformed: ${why}`);
  let headSeen = false;
  return {
    add(raw) {
      const piece = raw as { kind?: unknown; format?: unknown; records?: unknown } | null;
      if (!piece || typeof piece !== 'object' || typeof piece.kind !== 'string') throw malformed('a piece is not an object with a kind');
      if (piece.kind === 'head') {
        if (piece.format !== reader.format) throw malformed(`unknown piece format ${String(piece.format)}`);
        headSeen = true;
        reader.head?.(piece as H);
        return;
      }
      if (!headSeen) throw malformed('records arrived before the head piece');
      const take = Object.hasOwn(reader.records, piece.kind) ? reader.records[piece.kind] : undefined;
      if (!take) throw malformed(`unknown piece kind ${piece.kind}`);
      if (!Array.isArray(piece.records)) throw malformed(`the ${piece.kind} piece has no records array`);
      take(piece.records);
    },
    finish() {
      if (!headSeen) throw malformed('no head piece');
      return reader.finish();
    },
  };
}
