import { z } from 'zod';
import { PROBLEM_TYPE_PREFIX } from '@baton/http';

// Example bodies of an authority member's two listeners, as a cluster of east and west answers
// them, for their OpenAPI documents. The document's lint checks each one against its schema.

const audit = {
  id: 'drain-east',
  authority: 'proj',
  source: 'east',
  target: 'west',
  actor: 'olivia',
  reason: 'drain east',
  barrier: 2,
  epoch: 2,
  commit_term: 1,
  commit_index: 9,
  kind: 'planned_transfer',
  subject_type: 'authority',
  subject: 'proj',
  epoch_before: 1,
  time: 1796220460838,
  prev_hash: '9f2c…',
  hash: '4a71…',
};
const failover = {
  id: '12-0',
  authority: 'proj',
  source: 'west',
  target: 'east',
  actor: 'olivia',
  reason: 'west is down',
  barrier: 0,
  epoch: 3,
  commit_term: 2,
  commit_index: 12,
  kind: 'failover_transfer',
  subject_type: 'authority',
  subject: 'proj',
  epoch_before: 2,
  time: 1796220520114,
  evidence: '{"lost":[{"member":"west-1","serial":41}],"lost_count":1,"feeds":[{"member":"west-1","incarnation":"a1b2c3d4","pulled":41,"applied":40}],"unknown":[],"read_by":"east-1"}',
  prev_hash: '4a71…',
  hash: 'c03e…',
};
const view = (record: typeof audit | typeof failover) => ({ ...record, from: record.source || null, to: record.target, epoch_after: record.epoch });
const ownership = { authority: 'proj', home: 'west', epoch: 2, catch_up: null };

export const authorityExamples = {
  placement: { allowedHomes: ['east', 'west'], preferredHome: 'east' },
  placed: { authority: 'proj', home: 'west', epoch: 2, allowedHomes: ['east', 'west'], preferredHome: 'east' },
  transfer: { authority: 'proj', source: 'east', target: 'west', reason: 'drain east' },
  committed: audit,
  transferInProgress: {
    type: `${PROBLEM_TYPE_PREFIX}transfer-in-progress`,
    title: 'Conflict',
    status: 409,
    detail: 'a transfer of proj is already running (Idempotency-Key drain-east): wait for it or cancel it first',
    instance: '/availability/v1/transfers',
    code: 'transfer_in_progress',
    authority: 'proj',
    running_id: 'drain-east',
  },
  status: {
    id: 'drain-east',
    authority: 'proj',
    source: 'east',
    target: 'west',
    actor: 'olivia',
    reason: 'drain east',
    state: 'AwaitingCatchUp',
    barrier: 2,
    frontier: 1,
    last_reading_age_ms: 120,
    age_ms: 2400,
    deadline_in_ms: 27600,
    outcome_unknown: false,
    frozen: true,
    driver: 'east-1',
  },
  scheduled: {
    id: 'drain-east-tonight',
    authority: 'proj',
    source: 'east',
    target: 'west',
    actor: 'olivia',
    reason: 'drain east in the maintenance window',
    state: 'AwaitingCatchUp',
    barrier: 2,
    frontier: null,
    last_reading_age_ms: null,
    age_ms: 40,
    deadline_in_ms: 7_260_000,
    outcome_unknown: false,
    frozen: false,
    driver: 'east-1',
    not_before: '2027-01-05T02:00:00.000Z',
    not_after: '2027-01-05T04:00:00.000Z',
  },
  command: { type: 'transfer_authority', authority: 'proj', source: 'east', target: 'west' },
  commandCommitted: { id: 'failover-1', authority: 'proj', source: 'east', home: 'west', epoch: 3, commit_term: 1, commit_index: 12, audit_id: '12-0', replayed: false },
  authorities: { authorities: [ownership], next: null, total: 1 },
  ownership,
  audit: { authority: 'proj', records: [failover, audit], next: null },
  listing: {
    authority: 'proj',
    records: [
      { ...view(failover), loss: { lost: [{ member: 'west-1', serial: 41 }], lost_count: 1, feeds: [{ member: 'west-1', incarnation: 'a1b2c3d4', pulled: 41, applied: 40 }], unknown: [], read_by: 'east-1' } },
      view(audit),
    ],
    next: null,
  },
  chain: { authority: 'proj', head: { records: 2, hash: 'c03e…', commit_index: 12, seq: 0 }, anchors: [] },
  members: {
    members: [
      { member: 'east-1', datacenter: 'east', state: 'Alive', last_heard_ms_ago: 0 },
      { member: 'west-1', datacenter: 'west', state: 'Suspect', last_heard_ms_ago: 4100 },
    ],
  },
  feed: {
    member: 'east-1',
    incarnation: 'k3v9x2',
    serial: 2,
    entries: [
      { serial: 1, authority: 'proj', operation: 'publish 1.0.0', epoch: 1 },
      { serial: 2, authority: 'proj', operation: 'publish 1.0.1', epoch: 1 },
    ],
    truncated: false,
    clock: 1767225600000,
  },
  applied: { member: 'west-1', origin: 'east-1', incarnation: 'k3v9x2', serial: 2, storage: 'r7q1', wait: { atLeast: 2, reached: true } },
  write: { operation: 'publish 1.0.2', epoch: 2 },
  written: { authority: 'proj', epoch: 2, serial: 3 },
  ownershipEvent: { authority: 'proj', home: 'east', epoch: 2, home_urls: ['http://127.0.0.1:7600'], pending_target: 'west', frozen: false },
} as const;

/** The extension members of the authority variant's problems (transfer-problems.ts). */
export const authorityProblemExtensions = {
  code: z.string().describe('The error code (transfer_in_progress, stale_epoch...): the type without its prefix, as the engine names it'),
  transfer_id: z.string().describe('The transfer (or command) identity the problem is about: its Idempotency-Key'),
  authority: z.string().describe('The authority the problem is about'),
  running_id: z.string().describe('On 409 transfer-in-progress: the identity of the transfer already running'),
  barrier: z.number().int().min(0).describe("The barrier the target must reach (the source's final serial)"),
  frontier: z.number().int().min(0).describe('The highest serial the target was seen to hold'),
  home: z.string().nullable().describe("On 421 not-home and 412: the authority's home datacenter now, null when it has none"),
  home_urls: z
    .array(z.string())
    .describe("On 421 not-home: the public addresses of the home's members, as this member's roster lists them; a client sends the write to one of them"),
};
