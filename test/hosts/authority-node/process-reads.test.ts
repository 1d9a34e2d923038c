import test from 'ava';
import { startProcessCluster } from './process-cluster.js';

// Reads are your writes across members: the Raft leader answers a follower's forwarded command
// once it commits, which can be before the follower applied it; the follower's reads (and every
// other member's) must still include what it just answered 200 for.

test('an authority a follower answered 200 for is in its listing right away, and known to the other follower', async (t) => {
  const cluster = await startProcessCluster(t);
  await cluster.ready();
  const leader = (await cluster.control('east-1', 'GET', '/cluster')).body.leader as string;
  const followers = cluster.members.map((m) => m.id).filter((id) => id !== leader);
  t.is(followers.length, 2);
  // Several operators at once, so commits stream and a follower's apply can trail its answers.
  const misses: string[] = [];
  let created = 0;
  const operator = async (who: number) => {
    for (let i = 0; i < 30; i++) {
      const at = followers[(who + i) % 2];
      const authority = `ryw-${who}-${String(i).padStart(3, '0')}`;
      const made = await cluster.control(at, 'POST', '/commands', { body: { type: 'transfer_authority', authority, target: 'north' } });
      // A leader change mid-run answers 503: that command is not counted, the next one goes on.
      if (made.status !== 200) continue;
      created += 1;
      const page = await cluster.control(at, 'GET', `/authorities?after=${authority.slice(0, -1)}&limit=20`);
      if (!(page.body.authorities as { authority: string }[]).some((a) => a.authority === authority)) misses.push(`${authority} not listed at ${at}`);
      const other = followers[(who + i + 1) % 2];
      const lookup = await cluster.control(other, 'GET', `/authorities/${authority}`);
      if (lookup.status !== 200) misses.push(`${authority}: ${lookup.status} at ${other}`);
    }
  };
  await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(operator));
  t.true(created > 100, `authorities created: ${created}`);
  t.deepEqual(misses, [], 'every read after a 200 saw the write');
});
