import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { RedisServer } from '@baton/conformance';

/** A fresh directory for one test, removed after it. */
export async function tempDir(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), '{{name}}-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A real redis-server on a free loopback port for one test (needs redis-server on the PATH). */
export async function redisUrl(t: ExecutionContext): Promise<string> {
  const server = await RedisServer.start();
  t.teardown(() => server.stop());
  return server.url;
}
