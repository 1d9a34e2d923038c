import { Etcd3 } from 'etcd3';
import { SystemClock } from '@baton/kernel/internal/system-clock.js';

/**
 * The index in `endpoints` of the etcd member that leads the etcd cluster right now, as the
 * members that answer within `timeoutMs` say (all are asked at once; a paused or cut-off member
 * answers nothing: it is left out, and a leader only it could name is not found).
 */
export async function etcdLeaderIndex(endpoints: string[], timeoutMs = 5_000): Promise<number> {
  const deadline = new Date(new SystemClock().now() + timeoutMs);
  const answers = await Promise.all(
    endpoints.map(async (endpoint) => {
      const client = new Etcd3({ hosts: endpoint });
      try {
        const status = await client.maintenance.status({ deadline });
        return { id: status.header.member_id, leader: status.leader };
      } catch {
        return undefined;
      } finally {
        client.close();
      }
    }),
  );
  const answered = answers.filter((a) => a !== undefined);
  if (answered.length === 0) throw new Error(`no etcd member answered within ${timeoutMs} ms`);
  // The leader as the last member to answer in the list says (they agree once elected).
  const leader = answered[answered.length - 1].leader;
  const index = answers.findIndex((a) => a?.id === leader);
  if (index < 0) throw new Error(`no etcd member that answered is the leader ${leader}`);
  return index;
}
