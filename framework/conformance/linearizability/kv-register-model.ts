import type { KvCommand, KvResult } from '../kv-state-machine.js';
import type { Operation } from './history.js';
import type { Model } from './model.js';

/**
 * The sequential specification of the key-value store replicated by the suites' KV state
 * machine: per key, a register with put (answers the previous value), get and compare-and-set.
 * Keys are independent, so the history is checked one key at a time. The state of one part is
 * the register's value (null when absent).
 */
export const kvRegisterModel: Model<string | null, KvCommand, KvResult> = {
  partition(history) {
    const byKey = new Map<string, Array<Operation<KvCommand, KvResult>>>();
    for (const op of history) {
      const part = byKey.get(op.input.key) ?? [];
      part.push(op);
      byKey.set(op.input.key, part);
    }
    return [...byKey.values()];
  },

  init: () => null,

  step(value, input, output) {
    switch (input.op) {
      case 'put':
        return {
          ok: output === undefined || (output.op === 'put' && output.previous === value),
          state: input.value,
        };
      case 'get':
        return {
          ok: output === undefined || (output.op === 'get' && output.value === value),
          state: value,
        };
      case 'cas': {
        const swaps = value === input.expected;
        const ok =
          output === undefined ||
          (output.op === 'cas' &&
            output.ok === swaps &&
            output.value === (swaps ? input.value : value));
        return { ok, state: swaps ? input.value : value };
      }
      default:
        return { ok: false, state: value };
    }
  },

  isReadOnly: (input) => input.op === 'get',

  stateKey: (value) => (value === null ? '\u0000' : `=${value}`),

  describe(op) {
    const i = op.input;
    const what =
      i.op === 'put'
        ? `put(${i.key}, ${i.value})`
        : i.op === 'get'
          ? `get(${i.key})`
          : `cas(${i.key}, ${i.expected} -> ${i.value})`;
    return `${what} -> ${op.output === undefined ? 'unknown' : JSON.stringify(op.output)}`;
  },
};
