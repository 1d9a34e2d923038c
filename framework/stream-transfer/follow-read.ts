import type { StoredRecord } from './segments.js';
import type { StreamNode } from './stream-node.js';

/** The longest a read may wait for records to appear (seconds). */
export const MAX_READ_WAIT_SECONDS = 30;
/** How often a waiting read looks again: records become readable once their segment is stored. */
const RECHECK_MS = 200;
/** Reads waiting at once on one node; past it a read answers at once, so followers cannot pile up. */
export const MAX_WAITING_READS = 1_024;

/**
 * A long-poll read: the records from `from`, or, when there are none yet, the first that become
 * durable within `waitMs`, checked every 200 ms on the node's clock. Ends early, empty, when the
 * caller goes away. Bounded in count: past MAX_WAITING_READS concurrent waits, a read does not wait.
 */
export class FollowReads {
  private waiting = 0;

  constructor(private readonly node: StreamNode) {}

  async read(stream: string, from: number, limit: number, waitMs: number, signal: AbortSignal): Promise<StoredRecord[]> {
    const first = await this.node.read(stream, from, limit);
    if (first.length > 0 || waitMs <= 0 || this.waiting >= MAX_WAITING_READS) return first;
    this.waiting += 1;
    try {
      const deadline = this.node.clock.now() + waitMs;
      while (!signal.aborted && !this.node.isStopped) {
        const left = deadline - this.node.clock.now();
        if (left <= 0) return [];
        await this.node.clock.sleep(Math.min(RECHECK_MS, left), signal).catch(() => undefined);
        if (signal.aborted) return [];
        const records = await this.node.read(stream, from, limit);
        if (records.length > 0) return records;
      }
      return [];
    } finally {
      this.waiting -= 1;
    }
  }
}
