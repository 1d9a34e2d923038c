import type { Context } from 'koa';
import { z } from 'zod';
import { insufficientScope, unauthenticated, peekState } from '@baton/http';

/** Appends records to a stream (`stream:append`, or `stream:append:<pattern>` for some streams). */
export const STREAM_APPEND_SCOPE = 'stream:append';
/** Reads a stream's records and metadata (`stream:read`, or `stream:read:<pattern>`). */
export const STREAM_READ_SCOPE = 'stream:read';

export type DataAction = 'append' | 'read';

/** The principal an anonymous request acts as, where the data plane lets anonymous callers in. */
export const ANONYMOUS_PRINCIPAL = 'anonymous';

/**
 * Who may use the data API without a token. `none` (the default): every data request needs a
 * bearer token with the action's scope. `read`: anyone may read; `append`: anyone may read and
 * append, all as the one principal `anonymous` (so they share one producer namespace). An open
 * data plane is a deliberate choice: the node logs it at every start.
 */
export const dataPlaneOptions = z
  .object({ anonymous: z.enum(['none', 'read', 'append']).default('none') })
  .strict();

export type DataPlaneOptions = z.output<typeof dataPlaneOptions>;

export const CLOSED_DATA_PLANE: DataPlaneOptions = { anonymous: 'none' };

/**
 * Whether `scopes` grant `action` on `stream`: `stream:<action>` grants it on every stream,
 * `stream:<action>:<pattern>` on the streams the pattern matches, where `*` stands for any
 * run of characters (`stream:append:orders-*`).
 */
export function grantsStream(scopes: ReadonlySet<string>, action: DataAction, stream: string): boolean {
  const scope = `stream:${action}`;
  if (scopes.has(scope)) return true;
  const prefix = `${scope}:`;
  for (const granted of scopes) {
    if (granted.startsWith(prefix) && matchesPattern(granted.slice(prefix.length), stream)) return true;
  }
  return false;
}

function matchesPattern(pattern: string, name: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === name;
  const [head, ...rest] = parts;
  const tail = rest.pop()!;
  if (!name.startsWith(head) || name.length < head.length + tail.length || !name.endsWith(tail)) return false;
  let at = head.length;
  const end = name.length - tail.length;
  for (const middle of rest) {
    const found = name.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

function anonymousMay(options: DataPlaneOptions, action: DataAction): boolean {
  return options.anonymous === 'append' || (options.anonymous === 'read' && action === 'read');
}

/**
 * The first check of a data request, before its path is validated or its body read: a request
 * with no token is refused with 401 unless the data plane lets anonymous callers do `action`.
 * (A token that is presented and unknown was already refused by `authenticate`.)
 */
export function requireDataCaller(ctx: Context, options: DataPlaneOptions, action: DataAction): void {
  if (peekState(ctx, 'principal') !== undefined || anonymousMay(options, action)) return;
  throw unauthenticated(peekState(ctx, 'authFailure') ?? 'missing', `stream:${action}`);
}

/**
 * Authorises `action` on `stream` and names who does it: the authenticated principal when its
 * scopes grant it (403 otherwise, unless anonymous callers may do it anyway), or `anonymous`.
 * The name scopes the request's producer ids (producer-marks.ts).
 */
export function authorizeStream(ctx: Context, options: DataPlaneOptions, action: DataAction, stream: string): string {
  requireDataCaller(ctx, options, action);
  const principal = peekState(ctx, 'principal');
  if (principal === undefined) return ANONYMOUS_PRINCIPAL;
  if (grantsStream(principal.scopes, action, stream)) return principal.name;
  if (anonymousMay(options, action)) return ANONYMOUS_PRINCIPAL;
  throw insufficientScope(principal, `stream:${action}`, `on stream ${stream}`);
}
