import { connect, createServer, type Server, type Socket } from 'node:net';
import test from 'ava';
import { ConnectionAdmission, proveConnection, type AdmissionLimits, type AdmissionRefusal } from '@baton/http/internal/connection-admission.js';
import { VirtualClock } from '@baton/conformance/internal/virtual-clock.js';
import { eventually } from '../../hosts/eventually.js';

const LIMITS: AdmissionLimits = { maxConnections: 4, maxUnprovenPerAddress: 2, firstRequestMs: 1_000, headersTimeoutMs: 1_000, keepAliveTimeoutMs: 1_000 };

/** A TCP listener whose connections go through admission; the test plays the HTTP server's part (requestBegan, prove). */
async function admitted(t: { teardown(fn: () => void): void }, limits = LIMITS) {
  const clock = new VirtualClock();
  const refusals: AdmissionRefusal[] = [];
  const admission = new ConnectionAdmission(limits, clock, (reason) => refusals.push(reason));
  const accepted: Socket[] = [];
  const server: Server = createServer((socket) => {
    admission.admit(socket);
    if (!socket.destroyed) accepted.push(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const clients: Socket[] = [];
  t.teardown(() => {
    for (const socket of [...clients, ...accepted]) socket.destroy();
    server.close();
  });
  /** Opens a client connection and waits until the server has taken (or refused) it. */
  const open = async (): Promise<{ client: Socket; server: () => Socket | undefined; closed: () => boolean }> => {
    const before = accepted.length + refusals.length;
    const client = connect({ host: '127.0.0.1', port });
    clients.push(client);
    let closed = false;
    client.on('close', () => (closed = true));
    client.on('error', () => undefined);
    await eventually(() => accepted.length + refusals.length > before, 'the server to take the connection');
    const index = accepted.length - 1;
    return { client, server: () => (accepted.length > index ? accepted[index] : undefined), closed: () => closed };
  };
  return { clock, admission, refusals, open };
}

test('a new connection from an address at its unproven cap evicts the oldest idle one from that address', async (t) => {
  const { refusals, open } = await admitted(t);
  const first = await open();
  const second = await open();
  const third = await open();
  await eventually(() => first.closed(), 'the oldest idle connection to be closed');
  t.false(second.closed());
  t.false(third.closed());
  t.deepEqual(refusals, ['evicted']);
});

test('a connection with a request in progress is never evicted; with none idle the newcomer is refused', async (t) => {
  const { admission, refusals, open } = await admitted(t);
  const busy = [await open(), await open()];
  for (const c of busy) admission.requestBegan(c.server()!);
  const newcomer = await open();
  await eventually(() => newcomer.closed(), 'the newcomer to be refused');
  t.deepEqual(refusals, ['address_full']);
  t.false(busy.some((c) => c.closed()));
});

test('a proven connection counts against no unproven cap and is never evicted, but against the listener cap', async (t) => {
  const { refusals, open } = await admitted(t);
  const member = await open();
  proveConnection(member.server()!);
  const strangers = [await open(), await open()];
  t.deepEqual(refusals, [], 'the member took no unproven slot');
  const third = await open();
  await eventually(() => strangers[0].closed(), 'the oldest stranger to make room');
  t.false(member.closed());
  t.false(third.closed());
  // Listener cap of 4: member + 2 strangers + one more proven; the next one evicts a stranger.
  proveConnection(third.server()!);
  const fourth = await open();
  proveConnection(fourth.server()!);
  await open();
  t.deepEqual(refusals, ['evicted', 'evicted']);
  t.false(member.closed());
});

test('a connection that sends no request head within firstRequestMs is closed; one whose request began is not', async (t) => {
  const { clock, admission, refusals, open } = await admitted(t);
  const idle = await open();
  const speaking = await open();
  admission.requestBegan(speaking.server()!)();
  clock.advance(LIMITS.firstRequestMs);
  await eventually(() => idle.closed(), 'the idle connection to be closed');
  t.false(speaking.closed());
  t.deepEqual(refusals, ['first_request_timeout']);
});
