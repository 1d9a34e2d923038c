import { connect, type Socket } from 'node:net';

export interface Flood {
  /** Connections still open: the listener may have closed the others to make room. */
  open: Set<Socket>;
  /** Connections the listener closed (or refused) while the flood was opened. */
  closedByListener(): number;
  end(): void;
}

/**
 * Opens `count` TCP connections to `url`'s port, `wave` at a time, that never finish a request,
 * in three kinds in turn: idle (nothing sent, which on a TLS port is also a handshake never
 * begun), slow headers (a request line and one header, then nothing), and a slow body (complete
 * headers announcing 1 MB of JSON, then a few bytes). Nothing is read from them; they hold what
 * the listener lets them hold until `end`.
 */
export async function openFlood(url: string, count: number, wave = 500): Promise<Flood> {
  const { hostname, port, pathname } = new URL(url);
  const open = new Set<Socket>();
  let closed = 0;
  const path = pathname === '/' ? '/v1/streams/flood/records' : pathname;
  const starts = [
    () => undefined,
    (socket: Socket) => socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\n`),
    (socket: Socket) =>
      socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"records":[`),
  ];
  for (let opened = 0; opened < count; opened += wave) {
    await Promise.all(
      Array.from({ length: Math.min(wave, count - opened) }, (_, i) =>
        new Promise<void>((resolve) => {
          const socket = connect({ host: hostname, port: Number(port) });
          socket.on('connect', () => {
            open.add(socket);
            starts[(opened + i) % starts.length](socket);
            resolve();
          });
          socket.on('data', () => undefined);
          socket.on('error', () => resolve());
          socket.on('close', () => {
            if (open.delete(socket)) closed += 1;
            resolve();
          });
        }),
      ),
    );
  }
  return {
    open,
    closedByListener: () => closed,
    end: () => {
      for (const socket of open) socket.destroy();
    },
  };
}
