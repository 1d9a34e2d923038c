import { createHash } from 'node:crypto';
import { z } from 'zod';
import { commandFingerprint } from '@baton/consensus';

/**
 * What one log key holds. Every entry written by a member carries a proposal id (unique per
 * proposal, the same across its retries), so the proposer recognises its own entry when an
 * answer was lost, and the newest leadership term its proposer knew: a position must be the same
 * on every member, so its term comes from the entry (the replica keeps the maximum along the
 * log), never from whatever a member observes when it applies.
 */
export type LogEntry = BootstrapEntry | CommandEntry | VoterEntry;

export interface BootstrapEntry {
  kind: 'bootstrap';
  voters: string[];
}

export interface CommandEntry {
  kind: 'command';
  id: string;
  term: number;
  command: unknown;
  /** The idempotency key and the fingerprint of the command, when the proposal had a key. */
  key?: string;
  fingerprint?: string;
}

export interface VoterEntry {
  kind: 'voters';
  id: string;
  term: number;
  change: 'add' | 'remove';
  voter: string;
}

const term = z.number().int().min(0);
const proposalId = z.string().min(1).max(200);

const entrySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('bootstrap'), voters: z.array(z.string().min(1)).min(1) }),
  z.object({
    kind: z.literal('command'),
    id: proposalId,
    term,
    command: z.unknown(),
    key: z.string().optional(),
    fingerprint: z.string().optional(),
  }),
  z.object({
    kind: z.literal('voters'),
    id: proposalId,
    term,
    change: z.enum(['add', 'remove']),
    voter: z.string().min(1),
  }),
]);

/** An entry that is not ours (foreign bytes under the prefix): every member skips it alike. */
export interface MalformedEntry {
  kind: 'malformed';
  reason: string;
}

export function encodeEntry(entry: LogEntry): string {
  return JSON.stringify(entry);
}

export function decodeEntry(bytes: Buffer | string): LogEntry | MalformedEntry {
  let raw: unknown;
  try {
    raw = JSON.parse(typeof bytes === 'string' ? bytes : bytes.toString('utf8'));
  } catch (error) {
    return { kind: 'malformed', reason: `not JSON: ${(error as Error).message}` };
  }
  const parsed = entrySchema.safeParse(raw);
  if (!parsed.success) {
    return { kind: 'malformed', reason: parsed.error.issues.map((i) => i.message).join('; ') };
  }
  if (
    parsed.data.kind === 'command' &&
    (parsed.data.key === undefined) !== (parsed.data.fingerprint === undefined)
  ) {
    return { kind: 'malformed', reason: 'a keyed command entry needs both key and fingerprint' };
  }
  return parsed.data as LogEntry;
}

/**
 * The fingerprint that tells "the same command retried" from "another command under a reused
 * key": a hash of the command's canonical JSON, so key order does not matter and the claim
 * stored in etcd stays small whatever the command's size.
 */
export function fingerprintOf(command: unknown): string {
  return createHash('sha256').update(commandFingerprint(command)).digest('base64url');
}

/** The value stored under `idem/<key>`: which entry claimed the key, and for what command. */
export interface IdempotencyClaim {
  seq: number;
  id: string;
  fingerprint: string;
}

const claimSchema = z.object({
  seq: z.number().int().positive(),
  id: proposalId,
  fingerprint: z.string().min(1),
});

export function decodeClaim(bytes: Buffer): IdempotencyClaim | undefined {
  try {
    const parsed = claimSchema.safeParse(JSON.parse(bytes.toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
