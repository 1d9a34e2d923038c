import type { StateMachine } from '@baton/contracts/internal/metadata-consensus.js';
import {
  kvStateMachine,
  type KvCommand,
  type KvResult,
  type KvState,
} from '@baton/conformance/internal/kv-state-machine.js';

/**
 * The kv register with `capture` and `assemble`: a snapshot is a head piece (position, voters,
 * count) and then `keysPerPiece` keys per piece, so even a small state crosses as several
 * chunks. The capture copies the keys (a test machine, a few of them): what matters here is
 * that it is frozen when taken while apply goes on.
 */
export function piecewiseKv(keysPerPiece = 1): StateMachine<KvState, KvCommand, KvResult> {
  return {
    ...kvStateMachine,
    capture(state) {
      const head = {
        lastPosition: state.lastPosition && { ...state.lastPosition },
        voters: [...state.voters],
        commandsApplied: state.commandsApplied,
      };
      // In insertion order, as the live object holds them: an assembled state is the same value.
      const keys = Object.entries(state.data);
      return {
        *pieces() {
          yield { head };
          for (let i = 0; i < keys.length; i += keysPerPiece) yield { keys: keys.slice(i, i + keysPerPiece) };
        },
      };
    },
    assemble() {
      const state = kvStateMachine.initial();
      let sawHead = false;
      return {
        add(piece) {
          const p = piece as { head?: Omit<KvState, 'data'>; keys?: [string, string][] };
          if (p.head) {
            sawHead = true;
            state.lastPosition = p.head.lastPosition && { ...p.head.lastPosition };
            state.voters = [...p.head.voters];
            state.commandsApplied = p.head.commandsApplied;
          } else if (Array.isArray(p.keys)) {
            for (const [k, v] of p.keys) state.data[k] = v;
          } else throw new TypeError('not a piece of a kv capture');
        },
        finish() {
          if (!sawHead) throw new Error('a kv capture starts with its head piece');
          return state;
        },
      };
    },
  };
}
