import test from 'ava';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { FETCH_BLOCKED_PORTS, freeLoopbackPorts } from '@baton/cli/internal/local-cluster/free-ports.js';

async function ephemeralLow(): Promise<number | undefined> {
  try {
    return Number((await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')).trim().split(/\s+/)[0]);
  } catch {
    return undefined;
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

test('free ports are distinct, bindable, and below the range the kernel gives outgoing connections', async (t) => {
  const ports = await freeLoopbackPorts(40);
  t.is(new Set(ports).size, 40);
  for (const port of ports) t.true(await bindable(port), `port ${port} is free`);
  const low = await ephemeralLow();
  if (low !== undefined && low > 10_001) for (const port of ports) t.true(port < low, `port ${port} is below ${low}`);
});

test('ports handed out once are not handed out again by the same process', async (t) => {
  const first = await freeLoopbackPorts(50);
  const second = await freeLoopbackPorts(50);
  t.deepEqual(first.filter((p) => second.includes(p)), []);
});

test('no port handed out is one fetch refuses to connect to (10080 is on the Fetch standard\'s bad-port list)', async (t) => {
  const refused = await fetch('http://127.0.0.1:10080/').then(
    () => undefined,
    (error: Error) => error,
  );
  t.truthy(refused, 'fetch refuses port 10080 without connecting');
  t.true(FETCH_BLOCKED_PORTS.has(10080));
  const ports = await freeLoopbackPorts(3_000);
  t.false(ports.some((port) => FETCH_BLOCKED_PORTS.has(port)));
});
