import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import { ConfigError } from '@baton/kernel';
import { proveConnection } from './connection-admission.js';
import { HttpProblem } from './problem.js';
import { peekState, setState } from './state.js';

/** The member a peer request speaks for. */
export const PEER_MEMBER_HEADER = 'x-baton-member';
/** That member's own secret, proving it is that member. */
export const PEER_SECRET_HEADER = 'x-baton-peer-secret';

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const digestSchema = z.string().regex(DIGEST, 'a peer digest is "sha256:" and 64 lowercase hex digits');

/**
 * How a member proves who it is to its peers and checks who they are: its own secret, and the
 * SHA-256 digest of every peer's secret. A member holds only digests of the others, so reading
 * one member's config never lets anyone speak as another member.
 */
export const peerAuthConfigSchema = z
  .object({
    /** This member's secret, presented to every peer. */
    secret: z.string().min(32, 'a peer secret has at least 32 characters').regex(/^[\x21-\x7e]+$/, 'a peer secret is printable ASCII without spaces').optional(),
    /** A file holding the secret instead (its first line); it must not be readable by group or others. */
    secretFile: z.string().min(1).optional(),
    /**
     * Every peer's secret digest, `sha256:<64 hex digits>` of the secret's UTF-8 bytes; a list
     * while a peer's secret is being rotated (old and new both accepted).
     */
    peers: z.record(z.string().min(1), z.union([digestSchema, z.array(digestSchema).min(1).max(4)])),
  })
  .strict()
  .refine((c) => (c.secret === undefined) !== (c.secretFile === undefined), {
    message: 'give exactly one of secret and secretFile',
  });

export type PeerAuthConfig = z.input<typeof peerAuthConfigSchema>;

/** What a peer credential digest of `secret` is, as `peerAuth.peers` lists it. */
export function peerSecretDigest(secret: string): string {
  return `sha256:${createHash('sha256').update(secret, 'utf8').digest('hex')}`;
}

/** Who sent a peer request. `authenticated: false` only under `insecure: true`: the name is claimed. */
export interface PeerIdentity {
  readonly member: string;
  readonly authenticated: boolean;
}

export type PeerRefusal = 'missing' | 'unknown_member' | 'wrong_secret';

/** The presented credential of one request, as read from its headers. */
export interface PresentedCredential {
  member?: string;
  secret?: string;
}

/**
 * Checks peer credentials, for every peer route of every plugin and variant. Secrets are
 * compared as SHA-256 digests with `timingSafeEqual`; an unknown member is compared against a
 * dummy digest too, so the answer time does not tell which members exist.
 */
export class PeerAuthenticator {
  private readonly digests: ReadonlyMap<string, readonly Buffer[]>;
  private readonly dummy = createHash('sha256').update('no such member', 'utf8').digest();

  private constructor(
    readonly self: string,
    readonly insecure: boolean,
    private readonly secret: string | undefined,
    digests: Map<string, Buffer[]>,
  ) {
    this.digests = digests;
  }

  /**
   * Peers must prove who they are: `secret` is ours (absent on a lone member, which sends
   * nothing), `peers` maps each member to its digest.
   */
  static secure(self: string, secret: string | undefined, peers: Readonly<Record<string, string | readonly string[]>>): PeerAuthenticator {
    const digests = new Map<string, Buffer[]>();
    for (const [member, given] of Object.entries(peers)) {
      const list = typeof given === 'string' ? [given] : given;
      for (const digest of list) {
        if (!DIGEST.test(digest)) throw new ConfigError(`peerAuth.peers.${member}: a peer digest is "sha256:" and 64 lowercase hex digits`);
      }
      digests.set(member, list.map((digest) => Buffer.from(digest.slice('sha256:'.length), 'hex')));
    }
    return new PeerAuthenticator(self, false, secret, digests);
  }

  /** `insecure: true`: a peer is whoever it says it is. Only for a network nobody else reaches. */
  static insecure(self: string): PeerAuthenticator {
    return new PeerAuthenticator(self, true, undefined, new Map());
  }

  /** Whether a credential for this member is configured (always true when insecure). */
  knows(member: string): boolean {
    return this.insecure || this.digests.has(member);
  }

  /** The headers this member sends with every peer request. */
  outboundHeaders(): Record<string, string> {
    const headers: Record<string, string> = { [PEER_MEMBER_HEADER]: this.self };
    if (this.secret !== undefined) headers[PEER_SECRET_HEADER] = this.secret;
    return headers;
  }

  verify(presented: PresentedCredential): PeerIdentity | PeerRefusal {
    const member = presented.member ?? '';
    if (this.insecure) return member === '' ? 'missing' : { member, authenticated: false };
    const secret = presented.secret ?? '';
    if (member === '' || secret === '') return 'missing';
    const expected = this.digests.get(member);
    const given = createHash('sha256').update(secret, 'utf8').digest();
    // Every digest is compared, a match or not, so timing tells neither which nor whether.
    let equal = false;
    for (const digest of expected ?? [this.dummy]) if (timingSafeEqual(digest, given)) equal = true;
    if (expected === undefined) return 'unknown_member';
    return equal ? { member, authenticated: true } : 'wrong_secret';
  }

  /** Reads and checks the credential of a koa request. */
  verifyRequest(ctx: Pick<Context, 'get'>): PeerIdentity | PeerRefusal {
    return this.verify({ member: ctx.get(PEER_MEMBER_HEADER) || undefined, secret: ctx.get(PEER_SECRET_HEADER) || undefined });
  }
}

/** 401 for a peer request without a valid credential; the challenge names the headers. */
export function peerUnauthenticated(refusal: PeerRefusal): HttpProblem {
  const detail = {
    missing: `a peer request names its member (${PEER_MEMBER_HEADER}) and proves it (${PEER_SECRET_HEADER})`,
    unknown_member: 'the member named is not a peer of this member: check peerAuth.peers on both sides',
    wrong_secret: "the peer secret does not match the member's digest configured here: check peerAuth on both sides",
  }[refusal];
  return new HttpProblem({
    status: 401,
    type: 'peer-unauthenticated',
    detail,
    extra: { reason: refusal },
    // The body is never read: the connection closes rather than swallow what a stranger sends.
    headers: { 'WWW-Authenticate': 'Baton-Peer realm="baton"', Connection: 'close' },
  });
}

/** 403 for a peer that speaks for another member than the one it authenticated as. */
export function peerImpersonation(authenticated: string, claimed: string): HttpProblem {
  return new HttpProblem({
    status: 403,
    type: 'peer-impersonation',
    detail: `authenticated as member ${authenticated} but the request speaks for ${claimed}: a member may only speak as itself`,
    extra: { member: authenticated, claimed },
  });
}

/** Requests for a peer route, marked by requirePeer before it checks anything: metrics count their refusals. */
const peerRouteRequests = new WeakSet<object>();

/** Whether the request was for a peer route (it passed through requirePeer, refused or not). */
export function isPeerRouteRequest(ctx: object): boolean {
  return peerRouteRequests.has(ctx);
}

/**
 * Marks a request as one for a peer route, so its refusals count as peer refusals whatever
 * gate refuses it. requirePeer marks its requests itself; a peer route gated another way (the
 * bearer scope `peer` of the authority feeds under `insecure: true`) puts this in front.
 */
export const markPeerRoute: Middleware = async (ctx, next) => {
  peerRouteRequests.add(ctx);
  await next();
};

/**
 * Lets a request through only with a valid peer credential and places the peer in ctx.state;
 * `onRefused` sees every refusal (a transport counts them).
 */
export function requirePeer(auth: PeerAuthenticator, onRefused?: (refusal: PeerRefusal) => void): Middleware {
  return async (ctx, next) => {
    peerRouteRequests.add(ctx);
    const verdict = auth.verifyRequest(ctx);
    if (typeof verdict === 'string') {
      onRefused?.(verdict);
      throw peerUnauthenticated(verdict);
    }
    setState(ctx, 'peer', verdict);
    // A member's connection is never evicted to make room for strangers.
    if (verdict.authenticated) proveConnection(ctx.req.socket);
    await next();
  };
}

/** The authenticated peer; only call it behind `requirePeer`. */
export function peerOf(ctx: Pick<Context, 'state'>): PeerIdentity {
  const peer = peekState(ctx, 'peer');
  if (peer === undefined) throw new Error('no peer on this request: put requirePeer(...) in front of the handler');
  return peer;
}

/** Throws 403 unless `claimed` (a body's `from`, a `?from=`) is the member that authenticated. */
export function assertPeerSender(ctx: Pick<Context, 'state'>, claimed: string): void {
  const peer = peerOf(ctx);
  if (peer.member !== claimed) throw peerImpersonation(peer.member, claimed);
}
