import { SystemClock } from '../../../framework/kernel/system-clock.js';
import type { EtcdCluster } from '../../../framework/testing/etcd-server.js';
import type { SeededRng } from '../../../framework/testing/sim/seeded-rng.js';
import { firewalled, type WorkloadFault } from '../cluster.js';
import type { StreamCluster } from './stream-cluster.js';

/**
 * Faults of the etcd the metadata lives on:
 * - `etcd-kill`: kill -9 one etcd member (of three: the others keep a quorum), restart it on its
 *   data directory after the hold;
 * - `etcd-cut` (with a firewall): a stream node loses every etcd member (its packets to their
 *   client ports dropped), as a node on the wrong side of a partition from the metadata.
 */
export function etcdFaults(c: StreamCluster, etcd: EtcdCluster, rng: SeededRng): WorkloadFault[] {
  const clock = new SystemClock();
  const sleep = (ms: number, signal: AbortSignal) => clock.sleep(ms, signal).catch(() => undefined);
  const faults: WorkloadFault[] = [
    {
      kind: 'etcd-kill',
      async apply(_node, holdMs, signal) {
        const member = rng.pick(etcd.members);
        await member.kill();
        await sleep(holdMs, signal);
        const started = clock.now();
        await member.start();
        return `kill -9 etcd member ${member.name} for ${holdMs} ms; serving ${Math.round(clock.now() - started)} ms after the restart`;
      },
    },
  ];
  const firewall = c.firewall;
  if (firewall)
    faults.push({
      kind: 'etcd-cut',
      async apply(node, holdMs, signal) {
        const member = c.members.find((m) => m.id === node)!;
        await firewall.cutFrom(
          firewalled(member),
          etcd.members.map((m) => m.clientPort),
        );
        await sleep(holdMs, signal);
        await firewall.heal();
        return `${node} cut off from etcd for ${holdMs} ms`;
      },
    });
  return faults;
}
