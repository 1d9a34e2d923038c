/**
 * What a store asked of the file system, as the crash-consistency harness records it: by node
 * (an inode: a file or a directory, numbered as created, the harness's root directory is 0), so
 * a file renamed or linked keeps its identity, and each operation also carries the paths it
 * named at the time, to be read in a failure message.
 */
export type RecordedOperation =
  | { kind: 'mkdir'; parent: number; name: string; node: number; path: string }
  | { kind: 'create'; parent: number; name: string; node: number; path: string }
  | { kind: 'write'; node: number; offset: number; bytes: Uint8Array; path: string }
  | { kind: 'truncate'; node: number; length: number; path: string }
  /** fsync: of a file, its data; of a directory, the names in it. */
  | { kind: 'fsync'; node: number; path: string }
  | { kind: 'fdatasync'; node: number; path: string }
  | { kind: 'rename'; fromParent: number; fromName: string; toParent: number; toName: string; node: number; path: string; to: string }
  | { kind: 'link'; fromParent: number; fromName: string; toParent: number; toName: string; node: number; path: string; to: string }
  | { kind: 'unlink'; parent: number; name: string; node: number; path: string }
  | { kind: 'rmdir'; parent: number; name: string; node: number; path: string };

/** The root directory the recording starts from (empty). */
export const ROOT_NODE = 0;

/** One line for a failure message: `rename wal/streams.wal.compact -> wal/streams.wal`. */
export function describeOperation(op: RecordedOperation): string {
  switch (op.kind) {
    case 'write':
      return `write ${op.path} bytes ${op.offset}..${op.offset + op.bytes.length}`;
    case 'truncate':
      return `truncate ${op.path} to ${op.length}`;
    case 'rename':
    case 'link':
      return `${op.kind} ${op.path} -> ${op.to}`;
    default:
      return `${op.kind} ${op.path}`;
  }
}

/** Whether the operation changes a directory's names (rather than a file's bytes, or syncing). */
export function changesNames(
  op: RecordedOperation,
): op is Extract<RecordedOperation, { kind: 'mkdir' | 'create' | 'rename' | 'link' | 'unlink' | 'rmdir' }> {
  return op.kind === 'mkdir' || op.kind === 'create' || op.kind === 'rename' || op.kind === 'link' || op.kind === 'unlink' || op.kind === 'rmdir';
}
