import test from 'ava';
import { EtcdCluster } from '@baton/conformance/internal/servers/etcd-server.js';

/**
 * Real etcd clusters shared by every test of one file, one per name with the size given, started
 * before the first test and closed after the last: starting etcd costs seconds, a test milliseconds.
 * Call it once at the top of a test file; the returned record is filled once the file's tests run.
 */
export function etcdClustersForFile<K extends string>(
  sizes: Record<K, number>,
): Readonly<Record<K, EtcdCluster>> {
  const clusters: Partial<Record<K, EtcdCluster>> = {};
  test.before(async () => {
    const names = Object.keys(sizes) as K[];
    const started = await Promise.all(
      names.map((name) => EtcdCluster.start({ size: sizes[name] })),
    );
    names.forEach((name, i) => (clusters[name] = started[i]));
  });
  test.after.always(async () => {
    await Promise.all(Object.values<EtcdCluster | undefined>(clusters).map((c) => c?.close()));
  });
  return clusters as Readonly<Record<K, EtcdCluster>>;
}
