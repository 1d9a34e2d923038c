import test from 'ava';
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';
import { etcdConsensusSuite } from './etcd-consensus-suite.js';

let single: EtcdCluster | undefined;
let triple: EtcdCluster | undefined;

test.before(async () => {
  [single, triple] = await Promise.all([
    EtcdCluster.start({ size: 1 }),
    EtcdCluster.start({ size: 3 }),
  ]);
});

test.after.always(async () => {
  await Promise.all([single?.close(), triple?.close()]);
});

// One test at a time: each runs three members and their relays, and the fault tests measure
// leases in seconds, which a machine crowded by parallel tests would stretch.
const serial = test.serial as unknown as typeof test;

etcdConsensusSuite({
  test: serial,
  name: 'etcd (single node, 3 members)',
  etcd: () => single!,
  size: 3,
});

etcdConsensusSuite({
  test: serial,
  name: 'etcd (3-node cluster, 3 members)',
  etcd: () => triple!,
  size: 3,
});
