import type { CommitPlannedTransferCommand, RegisterTransferCommand } from '@baton/authority-transfer/internal/ownership.js';

// The planned-transfer commands the state machine tests apply, one move of `proj` from east to
// west by olivia, so every test that drives the machine by hand starts from the same fixture.

/** What apply is given besides the command: its log position and the voters at that point. */
export const applyContext = (index: number, voters = ['a', 'b', 'c'], term = 3) => ({ position: { term, index }, voters });

export function commit(overrides: Partial<CommitPlannedTransferCommand> = {}): CommitPlannedTransferCommand {
  return {
    type: 'commit_planned_transfer',
    id: 'k1',
    authority: 'proj',
    source: 'east',
    target: 'west',
    actor: 'olivia',
    reason: 'drain east',
    barrier: 0,
    ...overrides,
  };
}

export function registration(overrides: Partial<RegisterTransferCommand> = {}): RegisterTransferCommand {
  return {
    type: 'register_transfer',
    id: 'k1',
    authority: 'proj',
    source: 'east',
    target: 'west',
    actor: 'olivia',
    reason: 'drain east',
    driver: 'west-1',
    sources: [{ member: 'east-1', incarnation: 'i1', serial: 4800 }],
    deadline: 1_000,
    ...overrides,
  };
}
