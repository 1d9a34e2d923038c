import test from 'ava';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { CoreNode } from '../support/core-node.js';

// The cluster case (a repaired member refuses votes until a leader matched its log past what it
// lost, then votes again) is the transcript testdata/repaired-member.txt.

test('a lone voter whose log was repaired has nobody to catch up from: it campaigns and leads, and the guard is cleared', (t) => {
  const node = new CoreNode('n1', ['n1'], new SeededRng(1));
  node.core.campaign();
  while (node.processReady());
  node.core.propose('x');
  node.core.propose('y');
  while (node.processReady());
  t.is(node.core.role, 'leader');
  const last = node.disk.lastIndex();
  node.repair(1);
  t.is(node.disk.hardState().catchUpTo, last);
  t.true(node.core.catchingUp() === false, 'alone in the configuration: nothing to wait for');
  node.core.campaign();
  while (node.processReady());
  t.is(node.core.role, 'leader');
  t.is(node.disk.hardState().catchUpTo, undefined, 'the cleared guard is persisted with the next hard state');
});

test('a repaired member neither campaigns nor grants a vote while catching up', (t) => {
  const ids = ['n1', 'n2', 'n3'];
  const n2 = new CoreNode('n2', ids, new SeededRng(2));
  n2.repair(0);
  n2.disk.setHardState({ ...n2.disk.hardState(), catchUpTo: 5 });
  n2.restart();
  t.true(n2.core.catchingUp());
  n2.core.campaign();
  t.is(n2.core.role, 'follower', 'no campaign');
  for (const type of ['pre-vote', 'vote'] as const) {
    n2.step({ type, from: 'n3', to: 'n2', term: 1, index: 10, logTerm: 1 });
  }
  const rd = n2.processReady()!;
  t.deepEqual(
    rd.messages.map((m) => `${m.type} ${m.reject ? 'rejected' : 'granted'}`),
    ['pre-vote-resp rejected', 'vote-resp rejected'],
    'even a candidate with a longer log is refused',
  );
  t.is(n2.disk.hardState().vote, '', 'no vote recorded');
});
