import type { IncomingMessage, ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import test from 'ava';
import { RequestPacer } from '@baton/http/internal/request-pacer.js';

const request = (proven: boolean, destroyed = false) => ({ proven, socket: { destroyed } }) as unknown as IncomingMessage & { proven: boolean };
const response = {} as ServerResponse;

test('a burst of unproven requests starts at most perTurn per turn of the event loop, in arrival order; proven ones never wait', async (t) => {
  const started: string[] = [];
  let turn = 0;
  const pacer = new RequestPacer((req) => started.push(`${turn}:${(req as unknown as { id: string }).id}`), (req) => (req as unknown as { proven: boolean }).proven, 3);
  for (let i = 0; i < 8; i++) pacer.handle(Object.assign(request(false), { id: `s${i}` }), response);
  pacer.handle(Object.assign(request(true), { id: 'member' }), response);
  t.is(pacer.queued, 5);
  for (turn = 1; turn <= 3; turn++) await nextTurn();
  t.deepEqual(started, ['0:s0', '0:s1', '0:s2', '0:member', '1:s3', '1:s4', '1:s5', '2:s6', '2:s7']);
  t.is(pacer.queued, 0);
});

test('a request whose client went away while it waited is not handled', async (t) => {
  const started: string[] = [];
  const pacer = new RequestPacer((req) => started.push((req as unknown as { id: string }).id), () => false, 1);
  pacer.handle(Object.assign(request(false), { id: 'first' }), response);
  pacer.handle(Object.assign(request(false, true), { id: 'gone' }), response);
  pacer.handle(Object.assign(request(false), { id: 'third' }), response);
  for (let i = 0; i < 3; i++) await nextTurn();
  t.deepEqual(started, ['first', 'third']);
});
