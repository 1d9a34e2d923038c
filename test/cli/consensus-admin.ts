import type { ExecutionContext } from 'ava';
import { eventually } from '../hosts/eventually.js';
import { call, problemTypeOf } from '../support/https-call.js';
import { spawnBaton, type BatonRun } from './run-baton.js';

export interface Voter {
  id: string;
  leader: boolean;
  address?: string;
  match?: number;
  applied?: number;
  live?: boolean;
}
export interface Members {
  variant: string;
  term: number;
  leader?: string;
  from: string;
  voters: Voter[];
}

/** `baton ARGS --url URL --token TOKEN -o json`, as a user runs it. */
export function baton(url: string, token: string, ...args: string[]): Promise<BatonRun> {
  return spawnBaton([...args, '--url', url, '--token', token, '--json']);
}

export async function members(url: string, token: string): Promise<Members> {
  const run = await baton(url, token, 'member', 'list');
  if (run.code !== 0) throw new Error(`member list exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as Members;
}

/**
 * Through the CLI against a real three-member cluster: a fourth voter added (twice: the second
 * changes nothing) and removed, the leader moved to a follower, an unknown member 404, and a
 * removal that would lose the quorum refused once a member is stopped.
 */
export async function exerciseMembership(
  t: ExecutionContext,
  cluster: { prefix: string; ids: string[]; urlOf: (id: string) => string; token: string; stop: (id: string) => Promise<void> },
  /** With `url`, a running member: it must catch up with the leader and apply as a voter before it is removed. */
  fourth: { id: string; address: string; url?: string },
): Promise<void> {
  const { ids, urlOf, token } = cluster;
  let leader = '';
  await eventually(async () => {
    const all = await Promise.all(ids.map((id) => members(urlOf(id), token)));
    leader = all[0].leader ?? '';
    return leader !== '' && all.every((m) => m.leader === leader && m.voters.every((v) => v.live === true));
  }, 'a leader every member names, every voter live', 90_000);
  const follower = ids.find((id) => id !== leader)!;

  // Listed from a follower: the leader's view (match indexes), and the follower's own applied index.
  const listed = await members(urlOf(follower), token);
  t.deepEqual(listed.voters.map((v) => v.id), [...ids].sort());
  t.is(listed.from, leader);
  t.true(listed.voters.every((v) => typeof v.match === 'number' && v.match > 0), JSON.stringify(listed));
  t.is(typeof listed.voters.find((v) => v.id === follower)!.applied, 'number');
  // Asked of a follower: the others' addresses, the leader's included.
  for (const v of listed.voters.filter((v) => v.id !== follower)) t.truthy(v.address, `${v.id} address`);
  const human = await spawnBaton(['member', 'list', '--url', urlOf(follower), '--token', token]);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, new RegExp(`^${leader}\\s+leader`, 'm'));

  // A fourth voter (its process down: three of four still commit), asked of a follower.
  const added = await baton(urlOf(follower), token, 'member', 'add', fourth.id, '--peer-url', fourth.address);
  t.is(added.code, 0, added.stderr);
  t.deepEqual(JSON.parse(added.stdout), { member: fourth.id, added: true, voters: [...ids, fourth.id].sort() });
  const again = await baton(urlOf(leader), token, 'member', 'add', fourth.id, '--peer-url', fourth.address);
  t.is(again.code, 0, again.stderr);
  t.is((JSON.parse(again.stdout) as { added: boolean }).added, false);
  await eventually(async () => (await members(urlOf(leader), token)).voters.length === 4, 'the fourth voter in every list');
  const withFourth = await members(urlOf(leader), token);
  t.is(withFourth.voters.find((v) => v.id === fourth.id)!.address, fourth.address);
  if (fourth.url) {
    const lastIndex = Math.max(...withFourth.voters.map((v) => v.match ?? 0));
    await eventually(async () => {
      const seen = (await members(urlOf(leader), token)).voters.find((v) => v.id === fourth.id);
      return seen?.live === true && (seen.match ?? 0) >= lastIndex;
    }, `${fourth.id} live and caught up at the leader`, 30_000);
    // The new voter answers itself: it follows the leader and has applied the log.
    await eventually(async () => {
      const own = await members(fourth.url!, token);
      return own.leader === leader && (own.voters.find((v) => v.id === fourth.id)?.applied ?? 0) >= lastIndex;
    }, `${fourth.id} following ${leader} and applied`, 30_000);
  }
  const removed = await baton(urlOf(leader), token, 'member', 'remove', fourth.id);
  t.is(removed.code, 0, removed.stderr);
  t.deepEqual((JSON.parse(removed.stdout) as { voters: string[] }).voters, [...ids].sort());

  // Unknown members: 404, exit code 1.
  const unknownRemove = await baton(urlOf(leader), token, 'member', 'remove', 'nobody');
  t.is(unknownRemove.code, 1);
  t.regex(unknownRemove.stderr, /\(404\).*nobody is not a voter/);
  const unknownMove = await baton(urlOf(leader), token, 'leader', 'move', 'nobody');
  t.is(unknownMove.code, 1);
  t.regex(unknownMove.stderr, /\(404\)/);

  // Leader move, asked of another follower than the target: the target leads, every member says so.
  const third = ids.find((id) => id !== leader && id !== follower)!;
  const moved = await baton(urlOf(third), token, 'leader', 'move', follower);
  t.is(moved.code, 0, moved.stderr);
  t.like(JSON.parse(moved.stdout), { leader: follower, moved: true });
  await eventually(async () => {
    const all = await Promise.all(ids.map((id) => members(urlOf(id), token)));
    return all.every((m) => m.leader === follower);
  }, `${follower} named leader by every member`, 30_000);
  const already = await baton(urlOf(leader), token, 'leader', 'move', follower);
  t.is(already.code, 0, already.stderr);
  t.like(JSON.parse(already.stdout), { leader: follower, moved: false });

  // A member down: removing another would leave one live voter of two. Refused, nothing changes.
  const newLeader = follower;
  const [down, other] = ids.filter((id) => id !== newLeader);
  await cluster.stop(down);
  await eventually(async () => (await members(urlOf(newLeader), token)).voters.find((v) => v.id === down)?.live === false, `${down} no longer live at the leader`, 30_000);
  const refused = await baton(urlOf(newLeader), token, 'member', 'remove', other);
  t.is(refused.code, 1, refused.stdout);
  t.regex(refused.stderr, /\(409\).*would leave 1 live of 2 voters/);
  const direct = await call(`${urlOf(newLeader)}${cluster.prefix}/consensus/members/${other}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
  t.is(direct.status, 409);
  t.is(problemTypeOf(direct), 'would-lose-quorum');
  t.deepEqual((await members(urlOf(newLeader), token)).voters.map((v) => v.id), [...ids].sort());
}
