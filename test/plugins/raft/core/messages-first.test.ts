import test from 'ava';
import type { Message, Ready } from '@baton/plugin-raft/internal/core/types.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { CoreNode } from '../support/core-node.js';

/** Three cores; every Ready is recorded with the role its member had when handing it out. */
function cluster() {
  const ids = ['n1', 'n2', 'n3'];
  const rng = new SeededRng(3);
  const nodes = new Map(ids.map((id) => [id, new CoreNode(id, ids, rng)]));
  const readies: { id: string; role: string; rd: Ready }[] = [];
  const queue: Message[] = [];
  const settle = () => {
    for (let round = 0; round < 100; round++) {
      let busy = false;
      for (const [id, n] of nodes) {
        const role = n.core.role;
        const rd = n.processReady();
        if (!rd) continue;
        busy = true;
        readies.push({ id, role, rd });
        queue.push(...rd.messages);
      }
      while (queue.length > 0) {
        const m = queue.shift()!;
        nodes.get(m.to)!.step(m);
        busy = true;
      }
      if (!busy) return;
    }
  };
  return { nodes, readies, settle };
}

test("a leader's appends may leave before its write; a Ready that changes term or vote, or a follower's, may not", (t) => {
  const { nodes, readies, settle } = cluster();
  const n1 = nodes.get('n1')!;
  n1.core.campaign();
  settle();
  t.is(n1.core.role, 'leader');
  // Campaigning changed term and vote: those Readies carried vote requests and must not go first.
  const votes = readies.filter((r) =>
    r.rd.messages.some((m) => m.type === 'vote' || m.type === 'vote-resp'),
  );
  t.true(votes.length > 0);
  t.true(
    votes.every((r) => r.rd.messagesFirst !== true),
    'vote requests and grants wait for the write',
  );

  readies.length = 0;
  const r = n1.core.propose({ c: 'x' });
  t.true(r.ok);
  settle();
  const leaderAppend = readies.find(
    (x) =>
      x.id === 'n1' && x.rd.messages.some((m) => m.type === 'app' && (m.entries?.length ?? 0) > 0),
  );
  t.truthy(leaderAppend);
  t.true(leaderAppend!.rd.messagesFirst, "the leader's append goes out while its entry is written");
  t.true(leaderAppend!.rd.entries.length > 0, 'in the same Ready that persists the entry');
  const followerAnswers = readies.filter(
    (x) => x.id !== 'n1' && x.rd.messages.some((m) => m.type === 'app-resp'),
  );
  t.true(followerAnswers.length > 0);
  t.true(
    followerAnswers.every((x) => x.rd.messagesFirst !== true),
    'a follower answers only after its write',
  );
  for (const n of nodes.values()) t.is(n.core.log.committed, r.ok ? r.index : -1);
});
