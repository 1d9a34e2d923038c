import type { Command } from 'commander';
import { UsageError } from './cli-errors.js';
import type { CliContext } from './context.js';

/** Where an admin command sends its requests, and the bearer token it presents. */
export interface Connection {
  url: string;
  token?: string;
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
      `address of the ${target.listener} (default: $BATON_URL, else ${target.defaultUrl})`,
    )
    .option('--token <token>', 'bearer token for the admin API (default: $BATON_TOKEN)');
}

/**
 * The connection a command was given: flags first, then BATON_URL / BATON_TOKEN, then the
 * default address. A value that is not an http(s) URL is a usage error, before any request.
 */
export function connectionOf(
  ctx: CliContext,
  command: Command,
  target: ConnectionTarget,
): Connection {
  const options = command.optsWithGlobals<{ url?: string; token?: string }>();
  const url = options.url ?? nonEmpty(ctx.env.BATON_URL) ?? target.defaultUrl;
  const from =
    options.url !== undefined ? '--url' : nonEmpty(ctx.env.BATON_URL) ? 'BATON_URL' : 'the default';
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
  const token = options.token ?? nonEmpty(ctx.env.BATON_TOKEN);
  return { url: url.replace(/\/+$/, ''), ...(token ? { token } : {}) };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
