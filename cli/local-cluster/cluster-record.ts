import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { FailedError } from '../cli-errors.js';
import { writePrivateFile } from './private-files.js';

/** The node ids of the local stream cluster, in start order. */
export const LOCAL_NODE_IDS = ['n1', 'n2', 'n3'] as const;

const recordSchema = z
  .object({
    variant: z.enum(['stream', 'authority']),
    /** Port of each node: kept so a restart answers at the same addresses. */
    ports: z.record(z.string(), z.number().int().min(1).max(65535)),
    /** The admin token every node accepts; kept so scripts written against it go on working. */
    token: z.string().min(16),
    /** The token authority nodes present to each other's public servers (scope "peer"). */
    peerToken: z.string().min(16).optional(),
    /** Each member's own peer secret; its config holds it, the others only its digest. */
    peerSecrets: z.record(z.string(), z.string().min(32)).optional(),
    /** Members serve HTTPS with certificates of a cluster CA under `<dataDir>/tls` (`baton up --tls`). */
    tls: z.boolean().optional(),
    /** The authority a first start placed, so a restart neither places it again nor moves it back. */
    placed: z
      .object({ authority: z.string().min(1), home: z.string().min(1) })
      .strict()
      .optional(),
  })
  .strict();

export type ClusterRecord = z.output<typeof recordSchema>;

/** `<dataDir>/cluster.json`: what `baton up` chose the first time, reused on the next. */
export function recordPath(dataDir: string): string {
  return join(dataDir, 'cluster.json');
}

/** The record left by an earlier `baton up` in this data dir, or undefined on a fresh one. */
export async function readClusterRecord(dataDir: string): Promise<ClusterRecord | undefined> {
  let text: string;
  try {
    text = await readFile(recordPath(dataDir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const parsed = recordSchema.safeParse(safeJson(text));
  if (!parsed.success) {
    throw new FailedError(
      'bad-cluster-record',
      `${recordPath(dataDir)} is not a cluster record baton up can resume from (${parsed.error.issues[0]?.message ?? 'invalid'}): ` +
        'fix or remove it, or choose another --data-dir',
    );
  }
  return parsed.data;
}

/**
 * Written through a temporary file, so an interrupted write never leaves half a record; it holds
 * the admin token and every member's secret, so only its owner may read it (0600, dir 0700).
 */
export async function writeClusterRecord(dataDir: string, record: ClusterRecord): Promise<void> {
  await writePrivateFile(recordPath(dataDir), `${JSON.stringify(record, null, 2)}\n`);
}

/** A fresh admin token: long enough that it cannot be guessed from the loopback. */
export function newAdminToken(): string {
  return randomBytes(24).toString('base64url');
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
