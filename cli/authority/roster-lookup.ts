import { authorityControlApi, cliCall } from '../api-client.js';
import { FailedError } from '../cli-errors.js';
import type { Connection } from '../connection.js';

interface RosterMember {
  member: string;
  datacenter: string;
  state: string;
}

interface PictureMember {
  id: string;
  address: string | null;
  reachable: boolean;
}

/** The datacenters of the roster, in the order the member tracker lists them. */
export async function rosterDatacenters(connection: Connection): Promise<string[]> {
  const members = await trackedMembers(connection);
  return [...new Set(members.map((m) => m.datacenter))];
}

/**
 * A member of `datacenter` and its public server, where writes are taken: the member tracker
 * says who is in the datacenter, the cluster picture where each is reached. A member that
 * answered the picture is preferred, so a write does not go to a stopped member first.
 */
export async function homeMember(
  connection: Connection,
  datacenter: string,
): Promise<{ id: string; address: string }> {
  const inHome = (await trackedMembers(connection))
    .filter((m) => m.datacenter === datacenter)
    .map((m) => m.member);
  const body: { members: PictureMember[] } = await cliCall(authorityControlApi(connection).GET('/availability/v1/cluster'));
  const candidates = body.members
    .filter((m): m is PictureMember & { address: string } => inHome.includes(m.id) && m.address !== null)
    .sort((a, b) => Number(b.reachable) - Number(a.reachable));
  if (candidates.length === 0) {
    throw new FailedError(
      'no_home_member',
      `no member of ${datacenter} has a known address on ${connection.url}: give one with --public-url`,
    );
  }
  return { id: candidates[0].id, address: candidates[0].address };
}

async function trackedMembers(connection: Connection): Promise<RosterMember[]> {
  const body: { members: RosterMember[] } = await cliCall(authorityControlApi(connection).GET('/availability/v1/members'));
  return body.members;
}
