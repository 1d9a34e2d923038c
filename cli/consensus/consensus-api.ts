import type { Command } from 'commander';
import { adminRequest, type AdminRequest, type AdminResponse } from '../admin-client.js';
import { HttpRefusal, UnreachableError, UsageError } from '../cli-errors.js';
import { connectionOf, type Connection } from '../connection.js';
import type { CliContext } from '../context.js';

/** Where each variant serves the consensus administration, and the address `baton up` gives its first node. */
export const CONSENSUS_APIS = {
  stream: { prefix: '/v1/admin/consensus', defaultUrl: 'http://127.0.0.1:7700', listener: 'stream node API' },
  authority: { prefix: '/availability/v1/consensus', defaultUrl: 'http://127.0.0.1:7601', listener: 'authority control listener' },
} as const;
export type ConsensusVariant = keyof typeof CONSENSUS_APIS;

export interface ConsensusApi {
  variant: ConsensusVariant;
  url: string;
  token?: string;
  fetch?: typeof fetch;
  /** A request under the variant's prefix. */
  call<T>(request: AdminRequest): Promise<AdminResponse<T>>;
}

/** Adds --url, --token and --variant to a command of `member`, `leader` or `snapshot`. */
export function withConsensusOptions(command: Command): Command {
  return command
    .option(
      '--url <url>',
      `a stream node's API or an authority node's control listener (default: $BATON_URL, the context's, else ${CONSENSUS_APIS.stream.defaultUrl}, then ${CONSENSUS_APIS.authority.defaultUrl})`,
    )
    .option('--token <token>', 'bearer token: admin (stream), admin:write or admin:read (authority) (default: --token-file, $BATON_TOKEN, the context\'s)')
    .option('--variant <variant>', 'stream or authority (default: found by asking the address)');
}

/**
 * The consensus administration of whichever variant the address serves: the one --variant
 * names, else the first whose GET .../members the address does not answer 404 to (with no
 * address at all, each variant's default address in turn).
 */
export async function consensusApiOf(ctx: CliContext, command: Command): Promise<ConsensusApi> {
  const { variant: given } = command.optsWithGlobals<{ variant?: string }>();
  if (given !== undefined && given !== 'stream' && given !== 'authority')
    throw new UsageError(`--variant ${JSON.stringify(given)}: give stream or authority`);
  const connections = {
    stream: connectionOf(ctx, command, CONSENSUS_APIS.stream),
    authority: connectionOf(ctx, command, CONSENSUS_APIS.authority),
  };
  // The same address for both: one was given (flag, environment or context), not a default.
  const addressGiven = connections.stream.url === connections.authority.url;
  const make = (variant: ConsensusVariant): ConsensusApi => {
    const connection = connections[variant] as Connection & { fetch?: typeof fetch };
    return {
      variant,
      url: connection.url,
      ...(connection.token ? { token: connection.token } : {}),
      ...(connection.fetch ? { fetch: connection.fetch } : {}),
      call: <T>(request: AdminRequest) =>
        adminRequest<T>(
          connection.url,
          { ...request, path: CONSENSUS_APIS[variant].prefix + request.path, ...(connection.token ? { token: connection.token } : {}) },
          connection.fetch,
        ),
    };
  };
  if (given) return make(given);
  let lastUnreachable: unknown;
  for (const variant of ['stream', 'authority'] as const) {
    const api = make(variant);
    try {
      await api.call({ method: 'GET', path: '/members', timeoutMs: 5_000 });
      return api;
    } catch (error) {
      if (error instanceof HttpRefusal && error.status === 404) continue;
      // A 401/403/503 still says which variant this is: the command itself reports it.
      if (error instanceof HttpRefusal) return api;
      if (error instanceof UnreachableError && !addressGiven) {
        lastUnreachable = error;
        continue;
      }
      throw error;
    }
  }
  if (lastUnreachable) throw lastUnreachable;
  throw new UsageError(
    `${connections.stream.url} serves neither a stream node's admin API nor an authority control listener (mode ha): ` +
      'give the stream node API or the authority control listener address with --url',
  );
}
