import type { ClusterStatus, MemberStatus } from '../../framework/cluster/schemas.js';
import { adminRequest } from '../admin-client.js';
import { HttpRefusal, UnreachableError } from '../cli-errors.js';

export type { ClusterStatus, MemberStatus };

/** Where each variant serves its picture; a node of the other variant answers 404. */
export const CLUSTER_PATHS = { stream: '/v1/admin/cluster', authority: '/availability/v1/cluster' } as const;

/**
 * The picture from the first of `urls` that answers: its stream path, else (404) its authority
 * path. An unreachable address is passed over for the next; any other refusal (a missing or
 * wrong token) is the answer. Unreachable everywhere: UnreachableError naming every address.
 */
export async function fetchClusterPicture(urls: readonly string[], token: string | undefined, timeoutMs: number): Promise<ClusterStatus> {
  const failures: string[] = [];
  for (const url of urls) {
    try {
      return await pictureAt(url, token, timeoutMs);
    } catch (error) {
      if (!(error instanceof UnreachableError)) throw error;
      failures.push(`${error.address} (${error.reason})`);
    }
  }
  throw new UnreachableError(urls.length === 1 ? urls[0] : urls.join(', '), `no member answered: ${failures.join('; ')}`);
}

async function pictureAt(url: string, token: string | undefined, timeoutMs: number): Promise<ClusterStatus> {
  const get = (path: string) => adminRequest<ClusterStatus>(url, { method: 'GET', path, token, timeoutMs });
  try {
    return (await get(CLUSTER_PATHS.stream)).body;
  } catch (error) {
    if (!(error instanceof HttpRefusal && error.status === 404)) throw error;
    return (await get(CLUSTER_PATHS.authority)).body;
  }
}

/** `up`, `down`, and the cluster's own liveness verdict beside it where the variant keeps one. */
export function stateOf(member: MemberStatus): string {
  const reach = member.reachable ? 'up' : 'down';
  return member.liveness ? `${reach} (${member.liveness})` : reach;
}
