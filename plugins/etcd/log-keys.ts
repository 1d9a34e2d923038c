/** Width of the zero-padded sequence numbers, so keys sort in log order (enough for 2^53). */
const SEQ_WIDTH = 16;

/**
 * The key layout of one deployment's log under its prefix:
 * - `head`: the sequence number of the last entry (the counter every append compares on);
 * - `log/<seq>`: one entry per key, written once, never changed, deleted only by compaction;
 * - `idem/<key>`: the idempotency key's claim (fingerprint and sequence of its entry);
 * - `snapshot` and `snapshot-chunks/<seq>-<writer>/<n>`: the latest snapshot, in chunks;
 * - `election/<lease>`: the leader election's candidates.
 */
export class LogKeys {
  readonly head: string;
  readonly logPrefix: string;
  readonly idemPrefix: string;
  readonly snapshotManifest: string;
  readonly snapshotChunkPrefix: string;
  readonly electionPrefix: string;

  constructor(readonly prefix: string) {
    this.head = `${prefix}head`;
    this.logPrefix = `${prefix}log/`;
    this.idemPrefix = `${prefix}idem/`;
    this.snapshotManifest = `${prefix}snapshot`;
    this.snapshotChunkPrefix = `${prefix}snapshot-chunks/`;
    this.electionPrefix = `${prefix}election/`;
  }

  entry(seq: number): string {
    return `${this.logPrefix}${pad(seq)}`;
  }

  /** The first key after every log entry (etcd range ends are exclusive). */
  get logEnd(): Buffer {
    return prefixEnd(this.logPrefix);
  }

  idem(key: string): string {
    return `${this.idemPrefix}${key}`;
  }

  /** The keys of one snapshot's chunks, named by the manifest's `dir`. */
  snapshotChunks(dir: string): string {
    return `${this.snapshotChunkPrefix}${dir}/`;
  }

  snapshotChunk(dir: string, index: number): string {
    return `${this.snapshotChunks(dir)}${pad(index)}`;
  }

  /** The sequence number of a log key, or undefined when the key is not a log entry's. */
  seqOf(key: string): number | undefined {
    if (!key.startsWith(this.logPrefix)) return undefined;
    const digits = key.slice(this.logPrefix.length);
    if (!/^\d+$/.test(digits)) return undefined;
    return Number(digits);
  }
}

function pad(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`not a log sequence number: ${n}`);
  return String(n).padStart(SEQ_WIDTH, '0');
}

/** The smallest key greater than every key starting with `prefix`. */
export function prefixEnd(prefix: string): Buffer {
  const bytes = Buffer.from(prefix, 'utf8');
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i] < 0xff) {
      const end = Buffer.from(bytes.subarray(0, i + 1));
      end[i] += 1;
      return end;
    }
  }
  // Every byte is 0xff: the range runs to the end of the keyspace ("\0" means that to etcd).
  return Buffer.from([0]);
}
