import { StoreUnavailableError } from '../contracts/errors.js';
import type { MetadataConsensus } from '../contracts/metadata-consensus.js';
import type { BatonMetrics, ConsensusReading } from './metrics.js';

/**
 * The consensus gauges: term and leadership and the locally applied index from the contract,
 * and the commit index when the implementation reports one through a `status()` carrying
 * `commit` (the Raft does). The contract has no commit index, and the gauge is better left
 * unset than filled with the applied index under another name.
 */
export function consensusReadingOf(consensus: MetadataConsensus<unknown, unknown, unknown>): () => ConsensusReading {
  return () => {
    const leadership = consensus.leadership();
    return {
      term: leadership.term,
      appliedIndex: consensus.view().applied.index,
      commitIndex: commitIndexOf(consensus),
      isLeader: leadership.isLeader,
    };
  };
}

function commitIndexOf(consensus: object): number | undefined {
  const status = (consensus as { status?: unknown }).status;
  if (typeof status !== 'function') return undefined;
  const commit = (status.call(consensus) as { commit?: unknown } | undefined)?.commit;
  return typeof commit === 'number' ? commit : undefined;
}

/**
 * Wraps a store (ObjectStore, AuditStore...) so each StoreUnavailableError it raises is
 * counted under `store` and the method's name, then rethrown unchanged. Other errors (a
 * failed precondition, a conflict) are answers, not outages, and are not counted.
 */
export function countStoreErrors<T extends object>(store: T, name: string, metrics: BatonMetrics): T {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return (...args: unknown[]) => {
        const count = (error: unknown) => {
          if (error instanceof StoreUnavailableError) metrics.storeErrors.inc({ store: name, operation: property });
          throw error;
        };
        let result: unknown;
        try {
          result = value.apply(target, args);
        } catch (error) {
          return count(error);
        }
        return result instanceof Promise ? result.catch(count) : result;
      };
    },
  });
}
