import type { ClusterStatus, MemberStatus } from '@baton/cluster';
import { authorityControlApi, cliCall, streamApi } from '../api-client.js';
import { FailedError, HttpRefusal, UnreachableError, UsageError } from '../cli-errors.js';
import { checkedUrl } from '../connection.js';

export type { ClusterStatus, MemberStatus };

/** The addresses `baton up` gives each variant's first node, tried when nothing else is said. */
export const DEFAULT_URLS = ['http://127.0.0.1:7700', 'http://127.0.0.1:7601'];

/**
 * The picture from the first of `urls` that answers: its stream path, else (404, a node of the
 * other variant) its authority path. An unreachable address is passed over for the next; any other refusal (a missing or
 * wrong token) is the answer. Unreachable everywhere: UnreachableError naming every address.
 */
export async function fetchClusterPicture(urls: readonly string[], token: string | undefined, timeoutMs: number, send: typeof fetch = fetch): Promise<ClusterStatus> {
  return (await answeredPicture(urls, token, timeoutMs, send)).picture;
}

/** As fetchClusterPicture, with the address that answered (the serving member's listener). */
export async function answeredPicture(
  urls: readonly string[],
  token: string | undefined,
  timeoutMs: number,
  send: typeof fetch = fetch,
): Promise<{ picture: ClusterStatus; url: string }> {
  const failures: string[] = [];
  for (const url of urls) {
    try {
      return { picture: await pictureAt(url, token, timeoutMs, send), url };
    } catch (error) {
      if (!(error instanceof UnreachableError)) throw error;
      failures.push(`${error.address} (${error.reason})`);
    }
  }
  throw new UnreachableError(urls.length === 1 ? urls[0] : urls.join(', '), `no member answered: ${failures.join('; ')}`);
}

async function pictureAt(url: string, token: string | undefined, timeoutMs: number, send: typeof fetch): Promise<ClusterStatus> {
  const address = { url, ...(token ? { token } : {}), fetch: send };
  try {
    return await cliCall<ClusterStatus>(streamApi(address, { timeoutMs }).GET('/v1/admin/cluster'));
  } catch (error) {
    if (!(error instanceof HttpRefusal && error.status === 404)) throw error;
  }
  try {
    return await cliCall<ClusterStatus>(authorityControlApi(address, { timeoutMs }).GET('/availability/v1/cluster'));
  } catch (error) {
    if (!(error instanceof HttpRefusal && error.status === 404)) throw error;
    throw new WrongListenerError(url, error);
  }
}

/** `up`, `down`, and the cluster's own liveness verdict beside it where the variant keeps one. */
export function stateOf(member: MemberStatus): string {
  const reach = member.reachable ? 'up' : 'down';
  return member.liveness ? `${reach} (${member.liveness})` : reach;
}

/**
 * An address that serves neither variant's picture: most often an authority member's public
 * server (what its roster lists), which takes writes and peer calls but no admin reads. The
 * message says which listener the command needs.
 */
export class WrongListenerError extends FailedError {
  constructor(url: string, cause: HttpRefusal) {
    super(
      'wrong_listener',
      `${url} answers 404 for the cluster picture: it is neither a stream node's API nor an authority member's control listener. ` +
        "If it is an authority member's public address (the one peers and writes use), give --url that member's control listener instead " +
        '("baton up --variant authority" prints both, labelled control and public)',
      { cause },
    );
  }
}

/** The addresses --url (or the context, or $BATON_URL) names, each checked; the defaults when none is given. */
export function pictureAddresses(given: string | undefined, from: string): string[] {
  if (given === undefined) return DEFAULT_URLS;
  const urls = given.split(',').map((u) => u.trim()).filter((u) => u !== '');
  if (urls.length === 0) throw new UsageError(`${from} names no address: give it as http://host:port`);
  return urls.map((u) => checkedUrl(u, from));
}
