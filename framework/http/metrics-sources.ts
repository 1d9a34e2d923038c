import { StoreUnavailableError, type MetadataConsensus } from '@baton/contracts';
import { consensusFactsOf } from './consensus-facts.js';
import type { BatonMetrics, ConsensusReading } from './metrics.js';

/**
 * The consensus gauges, from the same facts `baton status`, /readyz and the dashboard read:
 * term, leadership, the applied index, and the commit index when the implementation reports it.
 */
export function consensusReadingOf(consensus: MetadataConsensus<unknown, unknown, unknown>): () => ConsensusReading {
  return () => {
    const facts = consensusFactsOf(consensus);
    return {
      term: facts.term,
      appliedIndex: facts.appliedIndex,
      isLeader: facts.role === 'leader',
      ...(facts.commitIndex === null ? {} : { commitIndex: facts.commitIndex }),
    };
  };
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
