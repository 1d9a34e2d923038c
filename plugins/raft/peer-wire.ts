import { z } from 'zod';

/** Where the Raft peer routes live on a member's listener. */
export const RAFT_HTTP_BASE = '/internal/raft/v1';

/** The shapes of the Raft peer routes' bodies: what the transport validates and the document describes. */
export const member = z.string().min(1).max(256);
export const peerMessage = z.object({ channel: z.string().min(1).max(64), body: z.unknown() });
export const batchSchema = z.object({
  cluster: z.string(),
  from: member,
  messages: z.array(peerMessage).max(100_000),
});
export const requestSchema = z.object({ cluster: z.string(), from: member, message: peerMessage });
