import { z } from 'zod';

// The answers of the consensus administration (consensus-admin-router.ts), as both variants'
// documents publish them. The handlers build these bodies from the contract's types.

const index = z.number().int().min(0);
const memberId = z.string().describe('A consensus member id');

export const voterDetailsSchema = z.object({
  id: memberId,
  address: z.string().optional().describe('Where its peers reach it, when the transport knows'),
  leader: z.boolean(),
  match: index.optional().describe('The highest log index the leader knows this voter holds'),
  applied: index.optional().describe('The applied index, known for the member that answers'),
  live: z.boolean().optional().describe('Heard from by the leader within an election timeout; absent when no leader answered'),
});

export const membershipDetailsSchema = z.object({
  term: index,
  leader: memberId.optional().describe('Absent when no leader is known'),
  from: memberId.describe('Who answered the details: the leader, or this member alone when no leader could be asked'),
  voters: z.array(voterDetailsSchema),
});

export const voterAddedSchema = z.object({
  member: memberId,
  added: z.boolean().describe('False when it was a voter already'),
  voters: z.array(memberId).describe('The voters in force now'),
});

export const voterRemovedSchema = z.object({
  member: memberId,
  removed: z.literal(true),
  voters: z.array(memberId).describe('The voters in force now'),
});

export const leaderMovedSchema = z.object({
  leader: memberId.optional().describe('The member leading now'),
  term: index,
  moved: z.boolean().describe('False when the named member led already'),
});

/** The extension members of this API's problems. */
export const consensusProblemExtensions = {
  live: z.array(memberId).describe('On 409 would-lose-quorum: the live voters that would be left'),
  voters: z.array(memberId).describe('On 409 would-lose-quorum: every voter that would be left'),
  consensus: z.string().describe('On 501: the consensus implementation in use'),
  capability: z.string().describe('On 501: the optional consensus operation it lacks'),
};

export const examples = {
  members: {
    term: 3,
    leader: 'n1',
    from: 'n1',
    voters: [
      { id: 'n1', address: 'http://127.0.0.1:7400', leader: true, match: 42, applied: 42, live: true },
      { id: 'n2', address: 'http://127.0.0.1:7410', leader: false, match: 42, live: true },
    ],
  },
  add: { id: 'n3', address: 'http://127.0.0.1:7420' },
  added: { member: 'n3', added: true, voters: ['n1', 'n2', 'n3'] },
  removed: { member: 'n3', removed: true, voters: ['n1', 'n2'] },
  move: { member: 'n2' },
  moved: { leader: 'n2', term: 4, moved: true },
  snapshot:
    '{"format":"baton-metadata-backup/1","variant":"stream-transfer","consensus":"raft","index":42,"term":3,"voters":["n1"],"pieces":1,"sha256":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","takenBy":"n1"}\n{"piece":"..."}\n',
} as const;
