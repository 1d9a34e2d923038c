import type { AppliedEntry } from '@baton/contracts';
import type { StreamCommand, StreamResult } from './commands.js';
import type { StreamId } from './model.js';

/**
 * What a node is told changed: some streams (from an applied entry, or a session of its own), or
 * everything (entries were missed, e.g. a snapshot was installed or a partition healed).
 */
export type Change = { streams: readonly StreamId[] } | { everything: true };

export const EVERYTHING: Change = { everything: true };

/**
 * The streams an applied entry may have changed: the one its command names, and those whose
 * transfer it started from a drain or rebalance queue, and those a failover moved or a node's
 * death set free of a transfer (the result lists them).
 */
export function streamsTouchedBy(entry: AppliedEntry<StreamCommand, StreamResult>): StreamId[] {
  const touched: StreamId[] = [];
  if ('stream' in entry.command && typeof entry.command.stream === 'string') touched.push(entry.command.stream);
  if (entry.result.ok && entry.result.started) touched.push(...entry.result.started);
  if (entry.result.ok && entry.result.changed) touched.push(...entry.result.changed);
  return touched;
}
