import { z } from 'zod';
import type { Message } from '../core/types.js';

/** Channel of Raft messages between members (one-way, best effort). */
export const RAFT_CHANNEL = 'raft';
/** Channel on which followers hand proposals and membership changes to the leader (request). */
export const PROPOSE_CHANNEL = 'raft-propose';

const member = z.string().min(1).max(256);
const index = z.number().int().nonnegative();

const entry = z.object({
  term: index,
  index: index,
  type: z.enum(['normal', 'conf']),
  data: z.unknown(),
});

const snapshot = z.object({
  meta: z.object({ index, term: index, voters: z.array(member) }),
  data: z.unknown(),
});

/** A Raft message as it arrives from a peer: validated field by field, never trusted. */
export const messageSchema = z.object({
  type: z.enum([
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
  ]),
  from: member,
  to: member,
  term: index,
  index: index.optional(),
  logTerm: index.optional(),
  entries: z.array(entry).optional(),
  commit: index.optional(),
  reject: z.boolean().optional(),
  rejectHint: index.optional(),
  snapshot: snapshot.optional(),
  readSeq: index.optional(),
  context: z.string().max(256).optional(),
});

/** The envelope of a Raft message: the cluster it belongs to, so two clusters never mix. */
export const raftEnvelopeSchema = z.object({ cluster: z.string(), message: messageSchema });

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
  }),
]);
export type ProposeRequest = z.infer<typeof proposeRequestSchema>;

/** The leader's answer: a receipt, or the error (by kind and reason) the caller should raise. */
export type ProposeResponse =
  | { ok: true; position: { term: number; index: number }; result: unknown; replayed: boolean }
  | { ok: false; kind: 'not_appended' | 'outcome_unknown'; reason: string; message: string };
