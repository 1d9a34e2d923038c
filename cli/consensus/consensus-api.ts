import type { Command } from 'commander';
import type { MembershipDetails } from '@baton/contracts';
import { authorityControlApi, cliAnswer, cliCall, streamApi } from '../api-client.js';
import { FailedError, HttpRefusal, UnreachableError, UsageError } from '../cli-errors.js';
import { connectionOf, type Connection } from '../connection.js';
import type { CliContext } from '../context.js';

/** The listener of each variant that serves the consensus administration, and the address `baton up` gives its first node. */
export const CONSENSUS_APIS = {
  stream: { defaultUrl: 'http://127.0.0.1:7700', listener: 'stream node API' },
  authority: { defaultUrl: 'http://127.0.0.1:7601', listener: 'authority control listener' },
} as const;
export type ConsensusVariant = keyof typeof CONSENSUS_APIS;

export interface ConsensusApi {
  variant: ConsensusVariant;
  url: string;
  /** The voters as the leader sees them. */
  members(timeoutMs?: number): Promise<MembershipDetails>;
  addMember(member: { id: string; address: string }): Promise<{ member: string; added: boolean; voters: string[] }>;
  removeMember(id: string): Promise<{ member: string; voters: string[] }>;
  moveLeader(member: string): Promise<{ leader?: string; term: number; moved: boolean }>;
  /** The backup's bytes as they arrive (a refusal in the server's words). */
  snapshot(): Promise<AsyncIterable<Uint8Array>>;
}

/** Changes wait for the leader to commit them (or to hand over): longer than a read. */
const CHANGE_TIMEOUT_MS = 30_000;
/** A backup of a large state takes its time to stream. */
const SNAPSHOT_TIMEOUT_MS = 120_000;
const SNAPSHOT_ACCEPT = { accept: 'application/x-ndjson, application/problem+json' };

/** The same operations on either variant's typed client: the paths differ only by their prefix (/v1/admin/consensus, /availability/v1/consensus). */
function consensusApi(variant: ConsensusVariant, connection: Connection): ConsensusApi {
  const stream = (timeoutMs?: number) => streamApi(connection, timeoutMs ? { timeoutMs } : {});
  const authority = (timeoutMs?: number) => authorityControlApi(connection, timeoutMs ? { timeoutMs } : {});
  const isStream = variant === 'stream';
  return {
    variant,
    url: connection.url,
    members: (timeoutMs) =>
      cliCall(isStream ? stream(timeoutMs).GET('/v1/admin/consensus/members') : authority(timeoutMs).GET('/availability/v1/consensus/members')),
    addMember: (body) =>
      cliCall(
        isStream
          ? stream(CHANGE_TIMEOUT_MS).POST('/v1/admin/consensus/members', { body })
          : authority(CHANGE_TIMEOUT_MS).POST('/availability/v1/consensus/members', { body }),
      ),
    removeMember: (member) =>
      cliCall(
        isStream
          ? stream(CHANGE_TIMEOUT_MS).DELETE('/v1/admin/consensus/members/{member}', { params: { path: { member } } })
          : authority(CHANGE_TIMEOUT_MS).DELETE('/availability/v1/consensus/members/{member}', { params: { path: { member } } }),
      ),
    moveLeader: (member) =>
      cliCall(
        isStream
          ? stream(CHANGE_TIMEOUT_MS).POST('/v1/admin/consensus/leader', { body: { member } })
          : authority(CHANGE_TIMEOUT_MS).POST('/availability/v1/consensus/leader', { body: { member } }),
      ),
    snapshot: async () => {
      const init = { parseAs: 'stream' as const, headers: SNAPSHOT_ACCEPT };
      const { data, status } = await cliAnswer(
        isStream
          ? stream(SNAPSHOT_TIMEOUT_MS).GET('/v1/admin/consensus/snapshot', init)
          : authority(SNAPSHOT_TIMEOUT_MS).GET('/availability/v1/consensus/snapshot', init),
      );
      if (!data) throw new FailedError(`http_${status}`, `${new URL(connection.url).origin} refused (${status})`);
      return data as unknown as AsyncIterable<Uint8Array>;
    },
  };
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
  const make = (variant: ConsensusVariant): ConsensusApi => consensusApi(variant, connections[variant]);
  if (given) return make(given);
  let lastUnreachable: unknown;
  for (const variant of ['stream', 'authority'] as const) {
    const api = make(variant);
    try {
      await api.members(5_000);
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
