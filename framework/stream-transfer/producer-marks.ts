import { z } from 'zod';
import { ID_PATTERN, type ProducerMark } from './model.js';

/** A producer key as commands and snapshots carry it: a producer id, then `@` and its principal. */
export const producerKeySchema = z.string().refine((key) => {
  const { id, principal } = parseProducerKey(key);
  return ID_PATTERN.test(id) && (principal === undefined || (principal.length > 0 && principal.length <= 256));
}, 'a producer key is a producer id, optionally followed by @ and a principal of 1-256 characters');

/**
 * The key a producer's mark is kept under: its id within the principal that writes it
 * (`billing@olivia`). Producer ids are ID_PATTERN names, which never hold `@`, so the key
 * splits back at its first `@`. One principal's batches therefore never match, advance or
 * poison another principal's sequence, whatever id either sends.
 */
export function producerKey(id: string, principal: string): string {
  return `${id}@${principal}`;
}

/** A key's producer id and principal; a key written before principals scoped them has none. */
export function parseProducerKey(key: string): { id: string; principal?: string } {
  const at = key.indexOf('@');
  return at < 0 ? { id: key } : { id: key.slice(0, at), principal: key.slice(at + 1) };
}

/**
 * One stream's producer marks, bounded per principal: each principal keeps its `maxPerPrincipal`
 * most recently used marks, so one client writing under a thousand producer ids forgets only
 * its own oldest marks, never another principal's. Also knows which principal holds each
 * producer id, so a second principal's use of it is refused rather than silently kept apart.
 *
 * `toRecord` lists marks least recently used first; a ProducerMarks built from that record
 * evicts in the same order.
 */
export class ProducerMarks {
  private readonly marks = new Map<string, ProducerMark>();
  /** Keys by principal, least recently used first ('' for keys without a principal). */
  private readonly byPrincipal = new Map<string, Set<string>>();
  private readonly holders = new Map<string, string>();

  constructor(
    record: Readonly<Record<string, ProducerMark>>,
    private readonly maxPerPrincipal: number,
  ) {
    for (const [key, mark] of Object.entries(record)) this.set(key, mark);
  }

  get size(): number {
    return this.marks.size;
  }

  get(key: string): ProducerMark | undefined {
    return this.marks.get(key);
  }

  /** The principal that holds producer `id` on this stream, if any does. */
  holderOf(id: string): string | undefined {
    return this.holders.get(id);
  }

  /** `principal` starts writing under `id` (its first batch is accepted): it holds the id from now. */
  claim(id: string, principal: string): void {
    if (!this.holders.has(id)) this.holders.set(id, principal);
  }

  /** Records the last batch of `key` and forgets the principal's least recently used marks beyond the bound. */
  set(key: string, mark: ProducerMark): void {
    const { id, principal = '' } = parseProducerKey(key);
    this.marks.delete(key);
    this.marks.set(key, mark);
    let keys = this.byPrincipal.get(principal);
    if (!keys) this.byPrincipal.set(principal, (keys = new Set()));
    keys.delete(key);
    keys.add(key);
    if (principal !== '') this.claim(id, principal);
    while (keys.size > this.maxPerPrincipal) {
      const oldest: string = keys.values().next().value!;
      keys.delete(oldest);
      this.marks.delete(oldest);
      const forgotten = parseProducerKey(oldest);
      if (this.holders.get(forgotten.id) === principal) this.holders.delete(forgotten.id);
    }
  }

  toRecord(): Record<string, ProducerMark> {
    return Object.fromEntries(this.marks);
  }
}
