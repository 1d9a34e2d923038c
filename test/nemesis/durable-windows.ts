import { access, readdir, readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { MemberProcess } from './member-process.js';
import type { DurableWindow } from './aimed-kill.js';

/** A snapshot file of the Raft file storage (plugins/raft/storage): `snap-<index>.snap`. */
const SNAPSHOT_FILE = /^snap-(\d{16})\.snap$/;
/** A log segment of the same storage. */
const SEGMENT_FILE = /^wal-\d{12}\.log$/;

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/**
 * A stream node's WAL compaction (framework/stream-transfer/file-wal.ts): the live entries are
 * written to `streams.wal.compact`, fsynced and renamed over `streams.wal`. Inside while that
 * temp file is there.
 */
export function walCompactionWindow(walDir: string): DurableWindow {
  return {
    label: 'WAL compaction',
    directories: async () => [walDir],
    opens: (_dir, name) => name === 'streams.wal.compact',
    inside: (dir, name) => exists(join(dir, name)),
  };
}

/**
 * A put into one of the fs plugin's stores (an object of the fs object store, a record of the
 * fs audit store): its bytes go to a temp file in the process's own temp directory
 * (`<root>/tmp/<host>-<pid>-<n>/`), fsynced, then renamed or linked into place and the
 * directory fsynced. Inside while that temp file is there.
 */
export function storePutWindow(
  label: string,
  storeRoot: string,
  process: MemberProcess,
): DurableWindow {
  return {
    label,
    directories: async () => {
      const pid = process.pid;
      if (pid === undefined) return [];
      const tmp = join(storeRoot, 'tmp');
      const own = `${hostname()}-${pid}-`;
      return (await readdir(tmp)).filter((n) => n.startsWith(own)).map((n) => join(tmp, n));
    },
    opens: () => true,
    inside: (dir, name) => exists(join(dir, name)),
  };
}

/**
 * A Raft snapshot put in force (plugins/raft/storage/file-storage.ts): its file is written and
 * synced, then a log record naming it (`"s":<index>`) is appended and synced. Inside while the
 * file is there and no segment names it yet. `above` tells a snapshot installed from the leader
 * from one of the member's own: a member restarted far behind cannot snapshot past what it had,
 * so a file above that is the leader's.
 */
export function raftSnapshotWindow(label: string, raftDir: string, above = 0): DurableWindow {
  return {
    label,
    directories: async () => [raftDir],
    opens: (_dir, name) => {
      const match = SNAPSHOT_FILE.exec(name);
      return match !== null && Number(match[1]) > above;
    },
    inside: async (dir, name) => {
      if (!(await exists(join(dir, name)))) return false;
      const index = Number(SNAPSHOT_FILE.exec(name)![1]);
      const naming = `"s":${index}}`;
      for (const segment of (await readdir(dir)).filter((n) => SEGMENT_FILE.test(n))) {
        const text = await readFile(join(dir, segment), 'utf8').catch(() => '');
        if (text.includes(naming)) return false;
      }
      return true;
    },
  };
}
