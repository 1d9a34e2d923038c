import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Firewall, FirewalledMember } from './firewall.js';
import { giveTo, type ProcessIdentity } from './member-identity.js';
import { MemberProcess } from './member-process.js';

/**
 * How long a member may take to answer after it was started: generous, since a loaded machine
 * takes seconds just to load a node process, and a restart is part of the fault, not a failure.
 */
export const READY_TIMEOUT_MS = 90_000;

/** One member of a nemesis cluster: its process, the ports it listens on, its own directory. */
export interface ClusterMember {
  id: string;
  process: MemberProcess;
  /** Every port it listens on (peers and clients alike): what a partition cuts. */
  ports: number[];
  /** Its data and config, under the run directory. */
  dir: string;
  identity?: ProcessIdentity;
}

/** A store every member of the cluster relies on, which the nemesis can take away for a while. */
export interface StoreOutage {
  /** "object store", "audit store of west-1"... */
  label: string;
  begin(): Promise<void>;
  end(): Promise<void>;
}

/**
 * A cluster of real member processes as the nemesis sees it: which members there are, where the
 * leader is believed to be, and the levers it pulls. A workload builds it (it knows the host and
 * its config) and checks it after the faults.
 */
export interface NemesisCluster {
  members: ClusterMember[];
  /** Best effort: the member the others follow now, if one can be asked. */
  leader(): Promise<string | undefined>;
  /** Resolves once the member answers again after a start (a deadline, never a blind sleep). */
  waitReady(id: string): Promise<void>;
  firewall?: Firewall;
  /** Why partitions are skipped in this run, when they are. */
  partitionsUnavailable?: string;
  storeOutages: StoreOutage[];
  /** The workload's own faults, drawn like the nemesis's (once per round each). */
  faults?: WorkloadFault[];
}

/**
 * A fault only the workload knows how to make (a failover needs the variant's admin API): it
 * applies it to `target`, holds it for about `holdMs` (less once `signal` aborts), heals it,
 * and says what happened.
 */
export interface WorkloadFault {
  kind: string;
  apply(target: string, holdMs: number, signal: AbortSignal): Promise<string>;
}

/** The process of member `id`, which must be one of `members`. */
export function processOf(members: ClusterMember[], id: string): MemberProcess {
  const member = members.find((m) => m.id === id);
  if (!member) throw new Error(`no member ${id} in this cluster`);
  return member.process;
}

export function firewalled(member: ClusterMember): FirewalledMember {
  if (!member.identity)
    throw new Error(`member ${member.id} runs under no uid of its own: it cannot be firewalled`);
  return { id: member.id, uid: member.identity.uid, ports: member.ports };
}

/**
 * Writes a member's config under its own directory (readable by it alone) and makes the process
 * that runs it; the log file sits next to it and survives restarts.
 */
export async function prepareMember(options: {
  id: string;
  dir: string;
  ports: number[];
  entryPoint: string;
  config: unknown;
  identity?: ProcessIdentity;
  umask?: number;
}): Promise<ClusterMember> {
  await mkdir(options.dir, { recursive: true, mode: 0o700 });
  const configFile = join(options.dir, 'config.json');
  await writeFile(configFile, `${JSON.stringify(options.config, null, 2)}\n`, { mode: 0o600 });
  await giveTo(options.identity, options.dir, configFile);
  const logFile = join(options.dir, 'member.log');
  return {
    id: options.id,
    dir: options.dir,
    ports: options.ports,
    identity: options.identity,
    process: new MemberProcess(
      options.id,
      options.entryPoint,
      configFile,
      logFile,
      options.identity,
      options.umask,
    ),
  };
}
