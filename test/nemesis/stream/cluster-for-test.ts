import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';
import { startStreamCluster, type NodeOptions, type StreamCluster } from './stream-cluster.js';

/** Where the runs' directories go (as the nemesis runs'): members run under their own uids, so not a private temp dir. */
export const RUNS_ROOT = process.env.NEMESIS_DIR ?? fileURLToPath(new URL('../../../../.nemesis/', import.meta.url));

/**
 * A stream cluster of real node processes (startStreamCluster, on the nodes' own Raft) in a run
 * directory of its own, closed after the test; every member's log is kept when the test fails.
 */
export async function streamClusterForTest(
  t: ExecutionContext,
  run: { name: string; seed: number; members?: number },
  nodeOptions: NodeOptions = {},
): Promise<StreamCluster> {
  const dir = join(RUNS_ROOT, `${run.name}-seed${run.seed}-${process.pid}`);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const running: { cluster?: StreamCluster } = {};
  t.teardown(async () => {
    await running.cluster?.close();
    if (t.passed) await rm(dir, { recursive: true, force: true });
    else t.log(`kept every member's log in ${dir}`);
  });
  running.cluster = await startStreamCluster({ seed: run.seed, members: run.members ?? 3, dir }, 'raft', nodeOptions);
  return running.cluster;
}
