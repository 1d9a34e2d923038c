import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay on a loopback port in front of one etcd endpoint, which a test can cut: while cut
 * it drops every connection it has and refuses new ones, as a network partition between one
 * member and etcd would. Lets a test isolate a single member without touching etcd itself.
 */
export class TcpCut {
  private readonly sockets = new Set<Socket>();
  private cut = false;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async open(target: string): Promise<TcpCut> {
    const url = new URL(target);
    const server = createServer();
    const relay: { cutter?: TcpCut } = {};
    server.on('connection', (client) =>
      relay.cutter?.relay(client, url.hostname, Number(url.port)),
    );
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port for the relay');
    relay.cutter = new TcpCut(server, address.port);
    return relay.cutter;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Drops every relayed connection and refuses new ones until `heal`. */
  isolate(): void {
    this.cut = true;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  heal(): void {
    this.cut = false;
  }

  async close(): Promise<void> {
    this.isolate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private relay(client: Socket, host: string, port: number): void {
    if (this.cut) {
      client.destroy();
      return;
    }
    const upstream = createConnection({ host, port });
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
