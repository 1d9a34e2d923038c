import { Etcd3 } from 'etcd3';
import { SystemClock } from '../../framework/kernel/system-clock.js';

/**
 * The index in `endpoints` of the etcd member that leads the etcd cluster right now, as the
 * members that answer within `timeoutMs` say (a paused or cut-off member answers nothing: it is
 * left out, and a leader only it could name is not found).
 */
export async function etcdLeaderIndex(endpoints: string[], timeoutMs = 5_000): Promise<number> {
  const deadline = new Date(new SystemClock().now() + timeoutMs);
  const ids: Array<string | undefined> = [];
  let leader = '';
  for (const endpoint of endpoints) {
    const client = new Etcd3({ hosts: endpoint });
    try {
      const status = await client.maintenance.status({ deadline });
      ids.push(status.header.member_id);
      leader = status.leader;
    } catch {
      ids.push(undefined);
    } finally {
      client.close();
    }
  }
  if (!ids.some((id) => id !== undefined))
    throw new Error(`no etcd member answered within ${timeoutMs} ms`);
  const index = ids.indexOf(leader);
  if (index < 0) throw new Error(`no etcd member that answered is the leader ${leader}`);
  return index;
}
