import type { ApplyContext, LogPosition, StateMachine, MemberId } from '@baton/contracts';

/**
 * A small key-value register state machine: what the consensus conformance suite and the
 * linearizability tests replicate. Reads go through the log too (`get`), so a history of
 * client operations can be checked against the register model.
 */
export type KvCommand =
  | { op: 'put'; key: string; value: string }
  | { op: 'get'; key: string }
  | { op: 'cas'; key: string; expected: string | null; value: string };

export type KvResult =
  | { op: 'put'; previous: string | null }
  | { op: 'get'; value: string | null }
  | { op: 'cas'; ok: boolean; value: string | null };

export interface KvState {
  data: Record<string, string>;
  /** Position of the last command applied, as told by ApplyContext: lets tests check ctx. */
  lastPosition: LogPosition | null;
  /** The voters as of the last membership change applied (empty until one is). */
  voters: MemberId[];
  /** How many commands were applied: a replica that applied one twice is caught by comparing it. */
  commandsApplied: number;
}

export const kvStateMachine: StateMachine<KvState, KvCommand, KvResult> = {
  initial: () => ({ data: {}, lastPosition: null, voters: [], commandsApplied: 0 }),

  apply(state: KvState, command: KvCommand, ctx: ApplyContext): KvResult {
    state.lastPosition = { ...ctx.position };
    state.commandsApplied += 1;
    const current = Object.hasOwn(state.data, command.key) ? state.data[command.key] : null;
    switch (command.op) {
      case 'put':
        state.data[command.key] = command.value;
        return { op: 'put', previous: current };
      case 'get':
        return { op: 'get', value: current };
      case 'cas':
        if (current !== command.expected) return { op: 'cas', ok: false, value: current };
        state.data[command.key] = command.value;
        return { op: 'cas', ok: true, value: command.value };
      default:
        // A malformed command is a rejected result, never a throw (a throw stops the member).
        return { op: 'get', value: null };
    }
  },

  membershipChanged(state: KvState, ctx: ApplyContext): void {
    state.lastPosition = { ...ctx.position };
    state.voters = [...ctx.voters];
  },

  snapshot: (state: KvState) => structuredClone(state),
  restore: (snapshot: unknown) => structuredClone(snapshot) as KvState,
};
