import { z } from 'zod';
import { DEFAULT_JSON_BOUNDS } from '@baton/http';
import type { Entry, Message, MessageType, Snapshot } from '../core/types.js';

/**
 * Channel of Raft messages between members (one-way, best effort).
 *
 * @internal
 */
export const RAFT_CHANNEL = 'raft';
/**
 * Channel on which followers hand proposals and membership changes to the leader (request).
 *
 * @internal
 */
export const PROPOSE_CHANNEL = 'raft-propose';

/**
 * Levels of JSON a command sits under where it travels deepest: an append posted on its own to
 * /messages, `{messages: [{body: {message: {entries: [{data: {c: command}}]}}}]}` (two fewer in a
 * stream frame, three in a forwarded proposal).
 */
export const COMMAND_ENVELOPE_DEPTH = 8;

/**
 * The deepest command the log takes, local or forwarded. A follower's transport refuses every
 * frame and body nested deeper than DEFAULT_JSON_BOUNDS.maxDepth before parsing it
 * (transport-http.ts): a deeper command was appended on the leader but no append carrying it
 * ever reached a follower, so neither it nor any entry after it could commit, while heartbeats
 * kept the leader in its term; every write answered 503 until the leader restarted.
 */
export const MAX_COMMAND_DEPTH = DEFAULT_JSON_BOUNDS.maxDepth - COMMAND_ENVELOPE_DEPTH;

const member = z.string().min(1).max(256);

const MESSAGE_TYPES: ReadonlySet<string> = new Set<MessageType>([
  'app',
  'app-resp',
  'heartbeat',
  'heartbeat-resp',
  'vote',
  'vote-resp',
  'pre-vote',
  'pre-vote-resp',
  'snap',
  'timeout-now',
  'read-index',
  'read-index-resp',
]);

const isIndex = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isMember = (v: unknown): v is string =>
  typeof v === 'string' && v.length >= 1 && v.length <= 256;
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const optional = <T>(v: unknown, check: (v: unknown) => v is T): boolean =>
  v === undefined || check(v);

function isEntry(v: unknown): v is Entry {
  return (
    isObject(v) && isIndex(v.term) && isIndex(v.index) && (v.type === 'normal' || v.type === 'conf')
  );
}

function isSnapshot(v: unknown): v is Snapshot {
  if (!isObject(v) || !isObject(v.meta)) return false;
  const meta = v.meta;
  return (
    isIndex(meta.index) &&
    isIndex(meta.term) &&
    Array.isArray(meta.voters) &&
    meta.voters.every(isMember)
  );
}

function isEntries(v: unknown): v is Entry[] {
  if (!Array.isArray(v)) return false;
  for (const e of v) if (!isEntry(e)) return false;
  return true;
}

/**
 * A Raft message as it arrives from a peer, checked field by field and never trusted: the
 * envelope names the cluster it belongs to, so two clusters never mix. Returns undefined for a
 * malformed body. Hand-written rather than a schema because it runs for every message on the
 * hot path; the result is a fresh message holding only the known fields.
 */
export function parseRaftEnvelope(
  body: unknown,
): { cluster: string; message: Message } | undefined {
  if (!isObject(body) || typeof body.cluster !== 'string' || !isObject(body.message))
    return undefined;
  const m = body.message;
  if (
    typeof m.type !== 'string' ||
    !MESSAGE_TYPES.has(m.type) ||
    !isMember(m.from) ||
    !isMember(m.to) ||
    !isIndex(m.term)
  )
    return undefined;
  if (
    !optional(m.index, isIndex) ||
    !optional(m.logTerm, isIndex) ||
    !optional(m.entries, isEntries) ||
    !optional(m.commit, isIndex) ||
    !optional(m.reject, (v): v is boolean => typeof v === 'boolean') ||
    !optional(m.rejectHint, isIndex) ||
    !optional(m.snapshot, isSnapshot) ||
    !optional(m.readSeq, isIndex) ||
    !optional(m.context, (v): v is string => typeof v === 'string' && v.length <= 256)
  ) {
    return undefined;
  }
  const message: Message = { type: m.type as MessageType, from: m.from, to: m.to, term: m.term };
  if (m.index !== undefined) message.index = m.index as number;
  if (m.logTerm !== undefined) message.logTerm = m.logTerm as number;
  if (m.entries !== undefined) message.entries = m.entries as Entry[];
  if (m.commit !== undefined) message.commit = m.commit as number;
  if (m.reject !== undefined) message.reject = m.reject as boolean;
  if (m.rejectHint !== undefined) message.rejectHint = m.rejectHint as number;
  if (m.snapshot !== undefined) message.snapshot = m.snapshot as Snapshot;
  if (m.readSeq !== undefined) message.readSeq = m.readSeq as number;
  if (m.context !== undefined) message.context = m.context as string;
  return { cluster: body.cluster, message };
}

/** Fields a message type cannot do without; a message lacking them is malformed. */
const REQUIRED: Partial<Record<Message['type'], (keyof Message)[]>> = {
  app: ['index', 'logTerm', 'commit'],
  'app-resp': ['index'],
  vote: ['index', 'logTerm'],
  'pre-vote': ['index', 'logTerm'],
  snap: ['snapshot'],
  'read-index': ['context'],
  'read-index-resp': ['index', 'context'],
};

export function hasRequiredFields(m: Message): boolean {
  return (REQUIRED[m.type] ?? []).every((k) => m[k] !== undefined);
}

export const proposeRequestSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('command'),
    cluster: z.string(),
    command: z.unknown(),
    key: z.string().optional(),
    timeoutMs: z.number().positive(),
  }),
  z.object({
    kind: z.literal('conf'),
    cluster: z.string(),
    change: z.enum(['add', 'remove']),
    member,
    timeoutMs: z.number().positive(),
    /** The voters the change was checked against (removeVoter's check-and-set); bounded like a configuration. */
    expectedVoters: z.array(member).max(1_000).optional(),
  }),
]);
export type ProposeRequest = z.infer<typeof proposeRequestSchema>;

/** The leader's answer: a receipt, or the error (by kind and reason) the caller should raise. */
export type ProposeResponse =
  | { ok: true; position: { term: number; index: number }; result: unknown; replayed: boolean }
  | { ok: false; kind: 'not_appended' | 'outcome_unknown'; reason: string; message: string };
