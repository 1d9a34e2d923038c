import type { Command } from 'commander';
import { UsageError } from './cli-errors.js';
import type { CliContext } from './context.js';
import { fetchTrustingCa } from './local-cluster/fetch-trusting-ca.js';
import { readTokenFile, selectedContext, type NamedContext } from './user-config.js';

/** Where an admin command sends its requests, the bearer token it presents, and how it reaches it. */
export interface Connection {
  url: string;
  token?: string;
  /** Set when a CA is to be trusted (--cacert, a context's caFile); the global fetch otherwise. */
  fetch?: typeof fetch;
}

/** What a group of commands talks to: a stream node's API or an authority node's control listener. */
export interface ConnectionTarget {
  /** Named in help and errors: "stream node API", "authority control listener". */
  listener: string;
  /** The address of a node started with its host's default config. */
  defaultUrl: string;
}

/** Adds `--url` and `--token` to a command, documented with their environment fallbacks. */
export function withConnectionOptions(command: Command, target: ConnectionTarget): Command {
  return command
    .option(
      '--url <url>',
      `address of the ${target.listener} (default: $BATON_URL, else the context's, else ${target.defaultUrl})`,
    )
    .option('--token <token>', 'bearer token for the admin API (default: --token-file, $BATON_TOKEN, the context\'s token file)');
}

/** The context a command runs under and the tokens read for it before its action (see loadAccess). */
interface Access {
  context?: { name: string; context: NamedContext; token?: string };
  /** The first line of --token-file. */
  tokenFromFile?: string;
  /** Why the context could not be read: thrown only if a command needs it. */
  problem?: unknown;
}

const accessOf = new WeakMap<CliContext, Access>();

/**
 * Reads, before a command's action, what its connection may come from besides flags and the
 * environment: --token-file, and the context (--context, else the current one) with its token
 * file. A --context or --token-file that cannot be used fails the command at once; a broken
 * current context only once a command would fall back to it.
 */
export async function loadAccess(ctx: CliContext, command: Command): Promise<void> {
  const options = command.optsWithGlobals<{ context?: string; tokenFile?: string }>();
  const access: Access = {};
  if (options.tokenFile !== undefined) access.tokenFromFile = await readTokenFile(options.tokenFile, '--token-file');
  try {
    const selected = await selectedContext(ctx.env, options.context);
    if (selected) {
      const { tokenFile } = selected.context;
      const token = tokenFile ? await readTokenFile(tokenFile, `the token file of context ${selected.name}`) : undefined;
      access.context = { ...selected, ...(token ? { token } : {}) };
    }
  } catch (error) {
    if (options.context !== undefined) throw error;
    access.problem = error;
  }
  accessOf.set(ctx, access);
}

/** Where a command's address, token and CA come from, before a default address is applied. */
export interface ResolvedAccess {
  /** The address given, or undefined for the command's default. */
  url?: string;
  /** What gave it: --url, BATON_URL, or "context NAME". */
  from: string;
  token?: string;
  fetch?: typeof fetch;
}

/**
 * Flags first, then BATON_URL / BATON_TOKEN, then the context. A context's token and CA go
 * only to the context's own address: a token is never sent to an address it was not made for.
 */
export function resolveAccess(ctx: CliContext, command: Command): ResolvedAccess {
  const options = command.optsWithGlobals<{ url?: string; token?: string; cacert?: string }>();
  const access = accessOf.get(ctx) ?? {};
  const envUrl = nonEmpty(ctx.env.BATON_URL);
  const given = options.url ?? envUrl;
  if (given === undefined && access.problem) throw access.problem;
  const context = access.context;
  const url = given ?? context?.context.url;
  const from = options.url !== undefined ? '--url' : envUrl !== undefined ? 'BATON_URL' : context ? `context ${context.name}` : 'the default';
  const forContext = context !== undefined && url !== undefined && sameAddress(url, context.context.url);
  const token = options.token ?? access.tokenFromFile ?? nonEmpty(ctx.env.BATON_TOKEN) ?? (forContext ? context.token : undefined);
  const caFile = options.cacert ?? (forContext ? context.context.caFile : undefined);
  return { ...(url !== undefined ? { url } : {}), from, ...(token ? { token } : {}), ...(caFile ? { fetch: trusting(caFile) } : {}) };
}

/**
 * The connection a command was given: flags first, then BATON_URL / BATON_TOKEN, then the
 * context, then the default address. A value that is not an http(s) URL is a usage error,
 * before any request.
 */
export function connectionOf(
  ctx: CliContext,
  command: Command,
  target: ConnectionTarget,
): Connection {
  const resolved = resolveAccess(ctx, command);
  const url = checkedUrl(resolved.url ?? target.defaultUrl, resolved.url === undefined ? 'the default' : resolved.from);
  return { url, ...(resolved.token ? { token: resolved.token } : {}), ...(resolved.fetch ? { fetch: resolved.fetch } : {}) };
}

/** `url` without trailing slashes, or a usage error saying who gave it and how to give it. */
export function checkedUrl(url: string, from: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(
      `${from} ${JSON.stringify(url)} is not a URL: give it as http://host:port`,
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`${from} ${url} is not an http(s) address: give it as http://host:port`);
  }
  return url.replace(/\/+$/, '');
}

function trusting(caFile: string): typeof fetch {
  try {
    return fetchTrustingCa(caFile);
  } catch (error) {
    throw new UsageError(`--cacert ${caFile}: cannot read it (${(error as Error).message})`);
  }
}

function sameAddress(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
