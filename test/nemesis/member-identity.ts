import { chown } from 'node:fs/promises';

/** The uid and gid a member process runs under. */
export interface ProcessIdentity {
  uid: number;
  gid: number;
}

/**
 * Every member runs under a uid of its own, so an iptables rule can say "packets this member
 * sends" (`-m owner --uid-owner`) on a loopback where all members share 127.0.0.1: a port tells
 * who listens, never who connected. The uids are numbers no account uses, unique to this runner
 * process and run, so two runs at once (ava runs test files in parallel) never share one and
 * never cut each other's links. All members share one gid: that is what lets them share an
 * object store directory.
 */
const UID_BASE = 1_000_000;
const UIDS_PER_PROCESS = 1024;
let runCounter = 0;

export function canSwitchUsers(): boolean {
  return process.getuid?.() === 0;
}

/**
 * Identities for `count` members of one run, or undefined when this process may not switch users
 * (not root): the members then run as the runner itself, and partitions cannot be made.
 */
export function memberIdentities(count: number): ProcessIdentity[] | undefined {
  if (!canSwitchUsers()) return undefined;
  const slot = (runCounter++ * 8) % UIDS_PER_PROCESS;
  const base = UID_BASE + (process.pid % 2_000_000) * UIDS_PER_PROCESS + slot;
  return Array.from({ length: count }, (_, i) => ({ uid: base + i + 1, gid: base }));
}

/** Gives a member's own files to its identity (its data dir, its config, read by it alone). */
export async function giveTo(
  identity: ProcessIdentity | undefined,
  ...paths: string[]
): Promise<void> {
  if (!identity) return;
  for (const path of paths) await chown(path, identity.uid, identity.gid);
}
