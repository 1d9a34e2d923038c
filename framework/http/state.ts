import type { Context } from 'koa';
import type { OperationId, Logger } from '@baton/contracts';
import type { PeerIdentity } from './peer-auth.js';

/** Who made a request, as established from its bearer token. */
export interface Principal {
  /** The name an audit records as the actor (e.g. "olivia"). */
  readonly name: string;
  readonly scopes: ReadonlySet<string>;
}

/**
 * What the shared middleware puts in `ctx.state`. Handlers read it through the accessors
 * below rather than by field name, so a missing middleware fails loudly instead of yielding
 * `undefined` deep inside a handler.
 */
export interface BatonState {
  requestId?: string;
  log?: Logger;
  principal?: Principal;
  /** Set by `authenticate` when the request carried credentials that were not accepted. */
  authFailure?: AuthFailure;
  idempotencyKey?: OperationId;
  /** Set by `requirePeer`: the member a peer request comes from. */
  peer?: PeerIdentity;
}

export type AuthFailure = 'missing' | 'malformed' | 'unknown_token';

export type StatefulContext = Pick<Context, 'state'>;

function state(ctx: StatefulContext): BatonState {
  return ctx.state as BatonState;
}

/** The request id (set by the request id middleware). */
export function requestIdOf(ctx: StatefulContext): string {
  const id = state(ctx).requestId;
  if (id === undefined) {
    throw new Error('no request id on this request: mount requestContext() before the routes');
  }
  return id;
}

/** The per-request logger (set by the request id middleware). */
export function loggerOf(ctx: StatefulContext): Logger {
  const log = state(ctx).log;
  if (log === undefined) {
    throw new Error('no request logger on this request: mount requestContext() before the routes');
  }
  return log;
}

/** The authenticated principal; only call it behind `requireScope`. */
export function principalOf(ctx: StatefulContext): Principal {
  const principal = state(ctx).principal;
  if (principal === undefined) {
    throw new Error('no principal on this request: put requireScope(...) in front of the handler');
  }
  return principal;
}

export function setState<K extends keyof BatonState>(ctx: StatefulContext, key: K, value: BatonState[K]): void {
  state(ctx)[key] = value;
}

export function peekState<K extends keyof BatonState>(ctx: StatefulContext, key: K): BatonState[K] {
  return state(ctx)[key];
}
