import { randomUUID } from 'node:crypto';
import { BatonError, CorruptRecordError } from '@baton/contracts';
import type { FeedEntry } from './change-feed.js';
import { encodeChecksummedLine, scanChecksummedLines, type ByteFiles } from '@baton/kernel';

const META = 'feed.meta';
const SEGMENT = /^seg-(\d{16})\.log$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The feed's files are damaged beyond a torn tail: the node refuses to start rather than guess. */
export class FeedCorruptError extends BatonError {
  constructor(detail: string) {
    super('feed_corrupt', `change feed storage is corrupt: ${detail}; restore the data dir from a backup or move it aside`);
  }
}

function segmentName(base: number): string {
  return `seg-${String(base).padStart(16, '0')}.log`;
}

function isFeedEntry(value: unknown): value is FeedEntry {
  return typeof value === 'object' && value !== null && Number.isSafeInteger((value as { serial?: unknown }).serial);
}

/**
 * One segment's entries (framework/kernel/checksummed-lines.ts: `crc32-hex json` lines). An
 * incomplete last line is a torn tail a crash mid-append leaves, never acknowledged; a complete
 * line that fails its checksum was damaged after it was written, and every entry after it was
 * acknowledged too: that is refused, never cut.
 */
function decodeSegment(name: string, bytes: Uint8Array): { entries: FeedEntry[]; validBytes: number; torn: boolean } {
  const scan = scanChecksummedLines(bytes, isFeedEntry, 'a feed entry');
  if (scan.damage) {
    const later = scan.damage.later.length;
    throw new CorruptRecordError({
      store: 'change-feed',
      file: name,
      offset: scan.damage.offset,
      reason: `${scan.damage.reason}, and ${later === 0 ? 'more bytes follow it' : `${later} intact ${later === 1 ? 'entry follows' : 'entries follow'} it`}, so it is no torn tail a crash leaves`,
      repair:
        "Stop the member. A peer's replica (feed-replicas/) can be moved aside: it is fetched again from its origin. The member's own feed holds " +
        'writes it acknowledged: restore its data dir from a backup',
    });
  }
  return { entries: scan.records.map((r) => r.value), validBytes: scan.intactBytes, torn: scan.tornBytes > 0 };
}

export interface FeedLogOptions {
  /** Entries per segment file; trimming drops whole segments. */
  segmentEntries?: number;
}

/**
 * A durable, gap-free sequence of feed entries with an incarnation: the storage under a
 * member's own change feed and under each replica of a peer's feed. Entries live in segment
 * files named after the serial before their first entry, appended and synced before an append
 * resolves, and are also kept in memory for reads (only what is retained: trimming drops whole
 * old segments, never the newest, so the last serial is always recoverable). Recovery cuts a
 * torn tail of the newest segment (a crash mid-append); any other damage refuses to start.
 *
 * The incarnation names one continuous history of serials. It is written before any entry, and
 * a reset (a replica following its origin into a new incarnation) removes the old entries
 * first, so after any crash the incarnation on disk matches the entries on disk.
 *
 * The storage id names these files: minted with the incarnation and again on every reset, so a
 * replica wiped by a disk loss (or reset to start over) never answers under the id it had. A
 * barrier probe compares it, so a frontier read before the wipe is not trusted after it.
 */
export class FeedLog {
  private entries: FeedEntry[] = [];
  /** Serial before the first retained entry. */
  private base = 0;
  private segments: { base: number; count: number }[] = [];
  private incarnationValue: string | undefined;
  private storageValue: string | undefined;
  private readonly segmentEntries: number;

  constructor(
    private readonly files: ByteFiles,
    options: FeedLogOptions = {},
  ) {
    this.segmentEntries = options.segmentEntries ?? 10_000;
    if (!(this.segmentEntries >= 1)) throw new RangeError(`segmentEntries must be >= 1, got ${this.segmentEntries}`);
  }

  get incarnation(): string | undefined {
    return this.incarnationValue;
  }

  /** Names these files' history; undefined before anything was written (an empty, new log). */
  get storage(): string | undefined {
    return this.storageValue;
  }

  /** Serial of the last durable entry (0 when none ever). */
  get last(): number {
    return this.base + this.entries.length;
  }

  /** Serial before the oldest retained entry: reads from before it are truncated. */
  get trimmed(): number {
    return this.base;
  }

  /** Recovers the incarnation and entries; `mint` names a new incarnation when there is none yet. */
  async open(mint?: () => string): Promise<void> {
    const names = await this.files.list();
    const metaBytes = names.includes(META) ? await this.files.read(META) : undefined;
    const bases = names
      .map((n) => SEGMENT.exec(n))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    if (metaBytes) {
      try {
        const meta = JSON.parse(decoder.decode(metaBytes)) as { incarnation?: unknown; storage?: unknown };
        if (typeof meta.incarnation !== 'string' || meta.incarnation === '') throw new Error('no incarnation');
        this.incarnationValue = meta.incarnation;
        this.storageValue = typeof meta.storage === 'string' && meta.storage !== '' ? meta.storage : undefined;
      } catch (error) {
        throw new FeedCorruptError(`${META} is unreadable (${(error as Error).message})`);
      }
    } else if (bases.length > 0) {
      throw new FeedCorruptError(`segments exist without ${META}`);
    }
    this.entries = [];
    this.segments = [];
    this.base = bases[0] ?? 0;
    for (const [i, base] of bases.entries()) {
      const name = segmentName(base);
      const bytes = (await this.files.read(name)) ?? new Uint8Array(0);
      const { entries, validBytes, torn } = decodeSegment(name, bytes);
      const newest = i === bases.length - 1;
      if (torn) {
        // Only the newest segment is appended to: a torn line anywhere else is damage.
        if (!newest) throw new FeedCorruptError(`${name} has a damaged record before the newest segment`);
        await this.files.truncate(name, validBytes);
      }
      if (base !== this.last) throw new FeedCorruptError(`${name} starts after serial ${base}, but the feed ends at ${this.last}`);
      for (const [k, entry] of entries.entries()) {
        if (entry.serial !== base + k + 1) throw new FeedCorruptError(`${name} holds serial ${entry.serial} where ${base + k + 1} belongs`);
      }
      this.entries.push(...entries);
      this.segments.push({ base, count: entries.length });
    }
    if (this.incarnationValue === undefined && mint) await this.writeIncarnation(mint());
    // Files written before storage ids existed get one now, kept from then on.
    else if (this.incarnationValue !== undefined && this.storageValue === undefined) await this.writeIncarnation(this.incarnationValue, randomUUID());
  }

  /**
   * Appends entries that continue the feed (serials last+1, last+2...), durably. After a failed
   * append the log must not be used again (the file may hold part of it): reopen to recover.
   */
  async append(entries: readonly FeedEntry[]): Promise<void> {
    if (entries.length === 0) return;
    if (this.incarnationValue === undefined) throw new Error('a feed log without an incarnation cannot take entries: open or reset it first');
    for (const [k, entry] of entries.entries()) {
      if (entry.serial !== this.last + k + 1) throw new RangeError(`feed entry ${entry.serial} does not follow ${this.last + k}`);
    }
    let written = 0;
    while (written < entries.length) {
      let current = this.segments.at(-1);
      if (!current || current.count >= this.segmentEntries) {
        current = { base: this.last, count: 0 };
        this.segments.push(current);
      }
      const take = entries.slice(written, written + this.segmentEntries - current.count);
      const name = segmentName(current.base);
      await this.files.append(name, encoder.encode(take.map(encodeChecksummedLine).join('')));
      await this.files.sync(name);
      // Counted and kept per chunk, so a trim running between two chunks sees a consistent feed.
      current.count += take.length;
      this.entries.push(...take);
      written += take.length;
    }
  }

  /** Retained entries after `after`, at most `limit`. */
  read(after: number, limit: number): FeedEntry[] {
    const start = Math.max(0, after - this.base);
    return this.entries.slice(start, start + Math.max(0, limit));
  }

  /**
   * Drops whole segments whose entries all lie at or below `serial`, oldest first (a crash
   * midway leaves a shorter, still contiguous feed). The newest segment always stays.
   */
  async trimThrough(serial: number): Promise<void> {
    while (this.segments.length > 1 && this.segments[0].base + this.segments[0].count <= serial) {
      const oldest = this.segments[0];
      await this.files.remove(segmentName(oldest.base));
      this.segments.shift();
      this.entries.splice(0, oldest.count);
      this.base = oldest.base + oldest.count;
    }
  }

  /** Forgets every entry and starts a new history under `incarnation`, at serial 0. */
  async reset(incarnation: string): Promise<void> {
    for (const segment of [...this.segments]) await this.files.remove(segmentName(segment.base));
    this.segments = [];
    this.entries = [];
    this.base = 0;
    await this.writeIncarnation(incarnation);
  }

  async close(): Promise<void> {
    await this.files.close();
  }

  private async writeIncarnation(incarnation: string, storage = randomUUID()): Promise<void> {
    await this.files.replace(META, encoder.encode(JSON.stringify({ incarnation, storage })));
    this.incarnationValue = incarnation;
    this.storageValue = storage;
  }
}
