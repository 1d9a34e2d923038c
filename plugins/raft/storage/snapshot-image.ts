/**
 * What a Raft snapshot's `data` is while it is in a member's memory: a frozen image of the
 * replicated state, read as pieces (JSON values) when it is written to disk or sent to a
 * follower. An image is never changed once made, so storage keeps it by reference, and every
 * call to `pieces()` starts again from the first piece.
 */
export interface SnapshotImage {
  readonly image: true;
  pieces(): Iterable<unknown>;
}

export function isSnapshotImage(value: unknown): value is SnapshotImage {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { image?: unknown }).image === true &&
    typeof (value as { pieces?: unknown }).pieces === 'function'
  );
}

/** An image of pieces already in hand (read from disk, or made in a test). */
export function imageOfPieces(pieces: readonly unknown[]): SnapshotImage {
  return { image: true, pieces: () => pieces };
}

/** The pieces of a snapshot's data: an image's, or a plain value as the only piece. */
export function piecesOf(data: unknown): Iterable<unknown> {
  return isSnapshotImage(data) ? data.pieces() : [data];
}
