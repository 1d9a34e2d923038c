import { createHash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { z } from 'zod';
import { ConfigError } from '@baton/kernel';
import { proveConnection } from './connection-admission.js';
import { HttpProblem } from './problem.js';
import { peekState, setState, type AuthFailure, type Principal } from './state.js';

/** One configured bearer token: `{token: 'xyz', principal: 'olivia', scopes: ['admin:write']}`. */
export const bearerTokenSchema = z
  .object({
    token: z.string().min(1, 'a token must not be empty').regex(/^[\x21-\x7e]+$/, 'a token is printable ASCII without spaces'),
    principal: z.string().min(1, 'name the principal the token stands for').max(256, 'a principal name is at most 256 characters'),
    scopes: z.array(z.string().min(1)).default([]),
  })
  .strict();

export const bearerTokensSchema = z.array(bearerTokenSchema);

export type BearerTokenConfig = z.input<typeof bearerTokenSchema>;

/** The realm named in every challenge, so a client knows which credentials are asked for. */
const REALM = 'baton';

interface Entry {
  digest: Buffer;
  principal: Principal;
}

/**
 * Maps bearer tokens to principals. Tokens are compared as SHA-256 digests with
 * `timingSafeEqual`, against every configured entry without stopping at a match, so neither
 * the content nor the position of a valid token leaks through response timing.
 */
export class BearerTokens {
  private readonly entries: Entry[];

  constructor(config: readonly BearerTokenConfig[]) {
    const parsed = bearerTokensSchema.safeParse(config);
    if (!parsed.success) {
      throw new ConfigError(
        `invalid bearer tokens: ${parsed.error.issues.map((i) => `tokens.${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    }
    const seen = new Set<string>();
    this.entries = parsed.data.map((entry, index) => {
      if (seen.has(entry.token)) {
        throw new ConfigError(`tokens[${index}] repeats a token given earlier: every token must map to one principal`);
      }
      seen.add(entry.token);
      return {
        digest: digest(entry.token),
        principal: Object.freeze({ name: entry.principal, scopes: new Set(entry.scopes) }),
      };
    });
  }

  /** The principal for this token, or undefined when it is not a configured token. */
  lookup(token: string): Principal | undefined {
    const presented = digest(token);
    let found: Principal | undefined;
    for (const entry of this.entries) {
      if (timingSafeEqual(entry.digest, presented) && found === undefined) found = entry.principal;
    }
    return found;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * Reads `Authorization: Bearer <token>` and, when the token is known, places the principal in
 * ctx.state. A request without a token is let through: a route opts into protection with
 * `requireScope`, so public routes (data API, /metrics) stay reachable behind the same
 * middleware. A request that presents a token this server does not know, or a malformed header,
 * is refused with 401 on every route (RFC 6750, section 3.1): a caller with a wrong token must
 * learn it, not see a public answer and take the token for good.
 */
export function authenticate(tokens: BearerTokens): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    let failure: AuthFailure | undefined;
    if (header === '') {
      failure = 'missing';
    } else {
      const match = /^Bearer +([\x21-\x7e]+) *$/i.exec(header);
      if (!match) failure = 'malformed';
      else {
        const principal = tokens.lookup(match[1]);
        if (principal) {
          setState(ctx, 'principal', principal);
          proveConnection(ctx.req.socket);
        }
        else failure = 'unknown_token';
      }
    }
    if (failure && failure !== 'missing') throw unauthenticated(failure);
    if (failure) setState(ctx, 'authFailure', failure);
    await next();
  };
}

/**
 * Lets the request through only when its principal holds `scope`: 401 with a Bearer challenge
 * when the token is missing, malformed or unknown; 403 with `insufficient_scope` when the
 * principal is known but lacks the scope (RFC 6750, section 3).
 */
export function requireScope(scope: string): Middleware {
  return async (ctx, next) => {
    const principal = peekState(ctx, 'principal');
    if (principal === undefined) {
      const failure = peekState(ctx, 'authFailure');
      if (failure === undefined) {
        throw new Error(`requireScope(${JSON.stringify(scope)}) runs without authenticate(): mount it first`);
      }
      throw unauthenticated(failure, scope);
    }
    if (!principal.scopes.has(scope)) throw insufficientScope(principal, scope);
    await next();
  };
}

/** 403 for a known principal without `scope` (`where` narrows it: "on stream orders"). */
export function insufficientScope(principal: Principal, scope: string, where?: string): HttpProblem {
  return new HttpProblem({
    status: 403,
    type: 'insufficient-scope',
    detail: `principal ${principal.name} lacks the scope ${scope}${where ? ` ${where}` : ''}: use a token that grants it`,
    extra: { required_scope: scope, principal: principal.name },
    headers: {
      'WWW-Authenticate': `Bearer realm="${REALM}", error="insufficient_scope", scope="${scope}"`,
    },
  });
}

/** 401 with the Bearer challenge RFC 6750 asks for, saying why the credential was not taken. */
export function unauthenticated(failure: AuthFailure, scope?: string): HttpProblem {
  const detail = {
    missing: `this operation needs a bearer token with the scope ${scope}: send Authorization: Bearer <token>`,
    malformed: 'the Authorization header is not of the form "Bearer <token>"',
    unknown_token: 'the bearer token is not recognised: check the token configured for this server',
  }[failure];
  // RFC 6750: a request without credentials gets a bare challenge, a bad one says why.
  const scoped = scope === undefined ? '' : `, scope="${scope}"`;
  const challenge =
    failure === 'missing' ? `Bearer realm="${REALM}"${scoped}` : `Bearer realm="${REALM}", error="invalid_token"${scoped}`;
  return new HttpProblem({
    status: 401,
    type: 'unauthenticated',
    detail,
    extra: scope === undefined ? {} : { required_scope: scope },
    headers: { 'WWW-Authenticate': challenge },
  });
}
