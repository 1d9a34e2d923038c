import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { ExecutionContext } from 'ava';

/**
 * A loopback port that cuts every connection at once, held until the test ends. A port found
 * free and released again can be taken meanwhile by a server another test starts (an etcd on a
 * free port, say), so a client meant to find nothing there would find that server instead.
 */
export async function refusingPort(t: ExecutionContext): Promise<number> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}
