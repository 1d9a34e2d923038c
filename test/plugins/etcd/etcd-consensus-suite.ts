import type { TestFn } from 'ava';
import type { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import {
  consensusSuite,
  type ConsensusCluster,
} from '@baton/conformance/internal/consensus-suite.js';
import { freshPrefix, makeMember, type KvEtcdConsensus } from './etcd-fixture.js';
import { TcpCut } from './tcp-cut.js';

/**
 * Runs the MetadataConsensus conformance suite on members of one log in `etcd()`. Each member
 * reaches etcd through its own relay, so `isolate` cuts one member off from etcd (its lease
 * lapses and another member leads) while the others keep going; `depose` makes the leader
 * resign, so a later candidate leads in a higher term.
 */
export function etcdConsensusSuite(options: {
  test: TestFn;
  name: string;
  etcd: () => EtcdCluster;
  size: number;
}): void {
  consensusSuite({
    test: options.test,
    name: options.name,
    size: options.size,
    deadlineMs: 30_000,
    stepMs: 10,
    supports: { depose: true, isolate: options.size >= 3 },
    cluster: async ({ size, machine }) => {
      const etcd = options.etcd();
      const prefix = freshPrefix('suite');
      const ids = Array.from({ length: size }, (_, i) => `n${i + 1}`);
      const relays: TcpCut[][] = [];
      const members: KvEtcdConsensus[] = [];
      for (const id of ids) {
        const cuts = await Promise.all(etcd.endpoints.map((endpoint) => TcpCut.open(endpoint)));
        relays.push(cuts);
        members.push(
          makeMember(
            cuts.map((cut) => cut.url),
            prefix,
            id,
            { initialVoters: ids },
            machine,
          ),
        );
      }
      await Promise.all(members.map((member) => member.start()));
      let spawned = 0;
      const extra: KvEtcdConsensus[] = [];
      const cluster: ConsensusCluster = {
        members,
        advance: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        stop: async () => {
          await Promise.all([...members, ...extra].map((member) => member.stop()));
          await Promise.all(relays.flat().map((relay) => relay.close()));
        },
        depose: async () => {
          const leader = members.find((member) => member.leadership().isLeader);
          if (!leader) throw new Error('no member leads, so none can be deposed');
          await leader.resign();
        },
        isolate: (index) => {
          for (const relay of relays[index]) relay.isolate();
        },
        heal: () => {
          for (const relay of relays.flat()) relay.heal();
        },
        spawn: async () => {
          spawned += 1;
          const id = `spare${spawned}`;
          const member = makeMember(etcd.endpoints, prefix, id, {}, machine);
          await member.start();
          extra.push(member);
          return { id, member };
        },
      };
      return cluster;
    },
  });
}
