import { SystemClock } from '@baton/kernel/internal/system-clock.js';
import type { EtcdCluster, EtcdMember } from '@baton/conformance/internal/servers/etcd-server.js';
import type { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { etcdLeaderIndex } from '../hosts/etcd-leader.js';
import { firewalled, type ClusterMember, type WorkloadFault } from './cluster.js';
import type { Firewall } from './firewall.js';

/** How long each etcd member may take to say who leads before the fault picks one at random. */
const LEADER_LOOKUP_MS = 2_000;

/**
 * Faults of the etcd a workload's metadata lives on, for members that talk to etcd (not to each
 * other) for their consensus:
 * - `etcd-kill`: kill -9 one etcd member (of three: the others keep a quorum), restart it on its
 *   data directory after the hold;
 * - `etcd-pause`: SIGSTOP one etcd member, half the time the one leading etcd, then SIGCONT: its
 *   connections stay open but nothing answers on them, so a client that talks to it waits for
 *   its deadlines instead of seeing a refusal, and a paused leader is replaced by an election;
 * - `etcd-cut` (with a firewall): a member loses every etcd member (its packets to their client
 *   ports dropped), as a member on the wrong side of a partition from the metadata.
 */
export function etcdFaults(
  members: readonly ClusterMember[],
  firewall: Firewall | undefined,
  etcd: EtcdCluster,
  rng: SeededRng,
): WorkloadFault[] {
  const clock = new SystemClock();
  const sleep = (ms: number, signal: AbortSignal) => clock.sleep(ms, signal).catch(() => undefined);
  const faults: WorkloadFault[] = [
    {
      kind: 'etcd-kill',
      async apply(_target, holdMs, signal) {
        const member = rng.pick(etcd.members);
        await member.kill();
        await sleep(holdMs, signal);
        const started = clock.now();
        await member.start();
        return `kill -9 etcd member ${member.name} for ${holdMs} ms; serving ${Math.round(clock.now() - started)} ms after the restart`;
      },
    },
    {
      kind: 'etcd-pause',
      async apply(_target, holdMs, signal) {
        const { member, role } = await pickEtcdMember(etcd, rng);
        member.pause();
        try {
          await sleep(holdMs, signal);
        } finally {
          member.resume();
        }
        return `SIGSTOP etcd member ${member.name} (${role}) for ${holdMs} ms`;
      },
    },
  ];
  if (firewall)
    faults.push({
      kind: 'etcd-cut',
      async apply(target, holdMs, signal) {
        const member = members.find((m) => m.id === target)!;
        await firewall.cutFrom(
          firewalled(member),
          etcd.members.map((m) => m.clientPort),
        );
        await sleep(holdMs, signal);
        await firewall.heal();
        return `${target} cut off from etcd for ${holdMs} ms`;
      },
    });
  return faults;
}

/**
 * Half the time the member leading etcd (when it can be learnt in time), otherwise one drawn at
 * random; the draws come first, so a seed makes the same choices whatever etcd answers.
 */
async function pickEtcdMember(
  etcd: EtcdCluster,
  rng: SeededRng,
): Promise<{ member: EtcdMember; role: string }> {
  const wantLeader = rng.chance(0.5);
  const drawn = rng.pick(etcd.members);
  if (!wantLeader) return { member: drawn, role: 'drawn at random' };
  const index = await etcdLeaderIndex(etcd.endpoints, LEADER_LOOKUP_MS).catch(() => undefined);
  if (index === undefined)
    return { member: drawn, role: 'drawn at random: the etcd leader could not be learnt' };
  return { member: etcd.member(index), role: 'the etcd leader' };
}
