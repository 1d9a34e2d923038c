import { Etcd3 } from 'etcd3';

/** The index in `endpoints` of the etcd member that leads the etcd cluster right now. */
export async function etcdLeaderIndex(endpoints: string[]): Promise<number> {
  const ids: string[] = [];
  let leader = '';
  for (const endpoint of endpoints) {
    const client = new Etcd3({ hosts: endpoint });
    try {
      const status = await client.maintenance.status();
      ids.push(status.header.member_id);
      leader = status.leader;
    } finally {
      client.close();
    }
  }
  const index = ids.indexOf(leader);
  if (index < 0) throw new Error(`no etcd member reports itself as the leader ${leader}`);
  return index;
}
