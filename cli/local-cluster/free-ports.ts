import { randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';

/** Where Linux says which ports it picks by itself, for outgoing connections and listen(0). */
const EPHEMERAL_RANGE_FILE = '/proc/sys/net/ipv4/ip_local_port_range';
/** Below this, ports are often reserved for well-known services. */
const LOWEST_CHOSEN_PORT = 10_000;
/** Candidates tried per port wanted before falling back to a kernel-chosen one. */
const ATTEMPTS_PER_PORT = 20;
/**
 * The ports at or above LOWEST_CHOSEN_PORT that the Fetch standard calls bad: fetch() (and so
 * every client here) refuses to connect to them, so a node given one never answers (10080, amanda).
 */
export const FETCH_BLOCKED_PORTS: ReadonlySet<number> = new Set([10080]);
/** Ports handed out by this process, not handed out again while it runs. */
const handedOut = new Set<number>();

/**
 * `count` loopback ports free right now, for processes that bind them a moment later.
 *
 * They are drawn at random from below the kernel's ephemeral range when it can be read. A port
 * the kernel picked with listen(0) lies inside that range, and is released before the process
 * that will own it binds it; meanwhile any outgoing connection on the machine may be given the
 * same port as its local end, and the process then fails to start with "address in use" (seen
 * on a loaded machine running many connections at once). A port below the range is never
 * handed to an outgoing connection. Each port is bound until every one is known, so the same
 * port is never handed out twice.
 */
export async function freeLoopbackPorts(count: number): Promise<number[]> {
  const range = await ephemeralRange();
  const servers: Server[] = [];
  try {
    while (servers.length < count) servers.push(await holdOnePort(range));
    const ports = servers.map(portOf);
    for (const port of ports) handedOut.add(port);
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}

async function holdOnePort(range: { low: number } | undefined): Promise<Server> {
  if (range && range.low > LOWEST_CHOSEN_PORT + 1) {
    for (let attempt = 0; attempt < ATTEMPTS_PER_PORT; attempt++) {
      const port = randomInt(LOWEST_CHOSEN_PORT, range.low);
      if (handedOut.has(port) || FETCH_BLOCKED_PORTS.has(port)) continue;
      const server = await listenOn(port).catch(() => undefined);
      if (server) return server;
    }
  }
  return listenOn(0);
}

function listenOn(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => resolve(server));
  });
}

function portOf(server: Server): number {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('loopback listener has no port');
  return address.port;
}

async function ephemeralRange(): Promise<{ low: number; high: number } | undefined> {
  try {
    const [low, high] = (await readFile(EPHEMERAL_RANGE_FILE, 'utf8')).trim().split(/\s+/).map(Number);
    return Number.isInteger(low) && Number.isInteger(high) && low <= high ? { low, high } : undefined;
  } catch {
    return undefined;
  }
}
