import { z } from 'zod';
import { AUTHORITY_AUDIT_KINDS } from './authority-audit-kinds.js';

// The answers of the authority node's two listeners, as published in their OpenAPI documents.
// The handlers build these bodies from typed values; the schemas are what a client reads.

const serial = z.number().int().min(0);

export const auditRecordSchema = z.object({
  id: z.string().describe("A planned transfer's identity (its Idempotency-Key); <commit_index>-0 for a raw move"),
  authority: z.string(),
  source: z.string().describe("The home it moved from ('' when the move established it)"),
  target: z.string(),
  actor: z.string().describe('The authenticated principal who ordered the move, or system:<component>'),
  reason: z.string(),
  barrier: serial.describe("The source member's final serial (taken once the authority was frozen there) the target applied before the commit; 0 for a raw move"),
  epoch: z.number().int().min(1).describe('The fencing epoch the move minted'),
  commit_term: z.number().int().min(0),
  commit_index: z.number().int().min(1),
  kind: z.enum(AUTHORITY_AUDIT_KINDS).optional().describe('What moved it (absent on records sealed before kinds: planned_transfer)'),
  subject_type: z.literal('authority').optional(),
  subject: z.string().optional(),
  epoch_before: serial.optional().describe('The epoch before the move (0: it had no home)'),
  time: serial.optional().describe('Wall-clock milliseconds as the proposing member read its clock'),
  evidence: z.string().optional().describe('A failover_transfer: its loss report, as JSON (see `loss`)'),
  prev_hash: z.string().optional().describe("The hash of the authority trail's previous record ('' for the first)"),
  hash: z.string().optional().describe("This record's hash: what the next record's prev_hash names"),
});

const lossSchema = z
  .object({
    lost: z.array(z.object({ member: z.string(), serial })).describe('Serials of the authority the old home acknowledged that the new home had not applied, at most 100'),
    lost_count: serial.describe('How many were found (lost may list fewer)'),
    feeds: z.array(z.object({ member: z.string(), incarnation: z.string(), pulled: serial, applied: serial })),
    unknown: z.array(z.object({ member: z.string(), why: z.string() })).describe('Old-home members whose loss could not be read'),
    read_by: z.string().describe('The member that proposed the failover and read the feeds'),
  })
  .describe("What the proposing member's change feeds showed the failover losing: only what it had pulled from the old home");

/** A record as the audit listings answer it: the stored record, with from/to/epoch_after (and a failover's loss) named so. */
export const auditRecordViewSchema = auditRecordSchema.extend({
  from: z.string().nullable(),
  to: z.string(),
  epoch_after: z.number().int().min(1),
  loss: lossSchema.optional(),
});

export const transferStatusSchema = z.object({
  id: z.string(),
  authority: z.string(),
  source: z.string(),
  target: z.string(),
  actor: z.string(),
  reason: z.string(),
  state: z.enum(['AwaitingCatchUp', 'Ready', 'Committing', 'Committed', 'Abandoned']),
  barrier: serial,
  frontier: serial.nullable().describe('Highest applied serial the target reported, if any'),
  last_reading_age_ms: z.number().nullable(),
  age_ms: z.number(),
  deadline_in_ms: z.number(),
  outcome_unknown: z.boolean().describe('Claimed, and the commit was sent without a known outcome; being resolved'),
  frozen: z.boolean().describe('The source acknowledges no write to the authority (503 with Retry-After) until the move commits or the freeze is lifted'),
  driver: z.string().describe('The member driving the transfer: probing the target, freezing, committing'),
  not_before: z.string().optional().describe('A scheduled transfer: it reads the target and freezes nothing before this (RFC 3339)'),
  not_after: z.string().optional().describe('A scheduled transfer: abandoned, with no audit, if it has not committed by then (RFC 3339)'),
});

export const rawTransferOutcomeSchema = z.object({
  id: z.string(),
  authority: z.string(),
  source: z.string().nullable(),
  home: z.string(),
  epoch: z.number().int().min(1),
  commit_term: z.number().int().min(0),
  commit_index: z.number().int().min(1),
  audit_id: z.string().describe('The id of the record the move sealed (<commit_index>-0)'),
  replayed: z.boolean(),
});

/** What an authority answer says of its home still catching up on the move that made it home. */
export const catchUpViewSchema = z
  .object({
    waiting_on: z
      .array(z.string())
      .describe("Members of the home (as the answering member's roster lists them) that have not yet said they hold every final: each refuses writes (503 home_catching_up) until its replicas do"),
    settled: z.array(z.string()).describe('Members of the home that held every final and are no longer checked'),
    finals: z.array(
      z.object({
        source: z.string().describe('The source member whose feed the final counts in'),
        incarnation: z.string(),
        final: serial.describe('Its final serial, recorded by the move'),
        held: serial.describe("What the answering member's replica of that feed holds now, in that incarnation"),
      }),
    ),
    held_at: z.string().describe('The member whose replicas `held` reads: the one answering'),
  })
  .nullable()
  .describe('Null once every member of the home settled, or when the move left no requirement (a failover, or no write to carry)');

export type CatchUpView = z.output<typeof catchUpViewSchema>;

export const ownershipSchema = z.object({
  authority: z.string(),
  home: z.string(),
  epoch: z.number().int().min(1),
  catch_up: catchUpViewSchema,
  allowedHomes: z.array(z.string()).optional().describe('The datacenters a planned transfer may move it to; absent: any'),
  preferredHome: z.string().optional().describe('The home its operators would rather have; absent: none'),
});

export const authorityPlacementBody = z
  .object({
    allowedHomes: z.array(z.string().min(1)).min(1, 'allowedHomes lists at least one datacenter (null allows any)').max(64).nullable().optional(),
    preferredHome: z.string().min(1).nullable().optional(),
  })
  .strict();

export const authorityPlacementSchema = z.object({
  authority: z.string(),
  home: z.string(),
  epoch: z.number().int().min(1),
  allowedHomes: z.array(z.string()).nullable(),
  preferredHome: z.string().nullable(),
});

export const ownershipEventSchema = z.object({
  authority: z.string(),
  home: z.string(),
  epoch: z.number().int().min(1),
  home_urls: z.array(z.string()).describe("The public addresses of the home's members, as the roster lists them: where writes go"),
  pending_target: z.string().nullable().describe("A registered planned transfer's target datacenter; null when none is registered"),
  frozen: z.boolean().describe('Writes are refused (503) until the registered transfer commits or is called off'),
});

export const membersSchema = z.object({
  members: z.array(
    z.object({
      member: z.string(),
      datacenter: z.string(),
      state: z.enum(['Alive', 'Suspect', 'Dead']),
      last_heard_ms_ago: z.number().nullable(),
    }),
  ),
});

const feedEntrySchema = z.object({ serial: z.number().int().min(1), authority: z.string(), operation: z.string(), epoch: z.number().int() });

export const feedPageSchema = z.object({
  member: z.string(),
  incarnation: z.string().describe('The history the serials count in; a new one means the feed restarted from 0'),
  serial: serial,
  entries: z.array(feedEntrySchema),
  truncated: z.boolean().describe('Entries after `after` were trimmed: the caller cannot catch up from this feed'),
  clock: z.number().int().describe("This member's clock when it answered (ms since the epoch): how a peer reads the clock skew between them"),
});

export const appliedSerialSchema = z.object({
  member: z.string(),
  origin: z.string(),
  incarnation: z.string().nullable().describe("The origin feed's incarnation the serial counts in (null: never pulled)"),
  serial: serial,
  storage: z
    .string()
    .nullable()
    .describe("Names this member's replica files; a new value means they were wiped or reset (a lost disk) and the serial may have gone backwards (null: nothing stored yet)"),
  wait: z
    .object({
      atLeast: serial,
      reached: z.boolean().describe('The replica holds the feed through atLeast in the asked incarnation; false: the wait ran out first'),
    })
    .optional()
    .describe('Present when this member held the answer for the asked serial (absent: it answered at once, as members without waiting probes do)'),
});

export const writeResultSchema = z.object({ authority: z.string(), epoch: z.number().int(), serial: z.number().int().min(1) });
