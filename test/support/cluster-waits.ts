import { eventually } from '../hosts/eventually.js';
import { call } from './https-call.js';

interface LeaderReport {
  id?: string;
  role: string;
  leader: string | null;
}

/**
 * Waits until one member reports itself leader and every member names it, and returns its id.
 * `report` asks one member for its member report (a throw counts as not yet).
 */
export async function leaderEveryMemberFollows(
  ids: readonly string[],
  report: (id: string) => Promise<LeaderReport>,
  ms = 90_000,
): Promise<string> {
  let leader = '';
  await eventually(async () => {
    const reports = await Promise.all(ids.map((id) => report(id).catch(() => undefined)));
    leader = reports.find((r) => r?.role === 'leader')?.leader ?? '';
    return leader !== '' && reports.every((r) => r?.leader === leader);
  }, 'a leader every member follows', ms);
  return leader;
}

/** Places authority `authority` in `datacenter` through a member's control listener, once the Raft has a leader. */
export async function placeAuthority(controlUrl: string, token: string, authority: string, datacenter: string): Promise<void> {
  await eventually(async () => {
    const placed = await call(`${controlUrl}/availability/v1/commands`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': `place-${authority}` },
      body: { type: 'transfer_authority', authority, target: datacenter },
    }).catch(() => undefined);
    return placed?.status === 200;
  }, `${authority} placed in ${datacenter} once the Raft has a leader`, 90_000);
}
