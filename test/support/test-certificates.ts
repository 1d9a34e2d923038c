import { createClusterCa, issueCertificate, type ClusterCa, type IssuedCertificate } from '@baton/cli/internal/local-cluster/cluster-certificates.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';

export interface TestCertificates {
  ca: ClusterCa;
  /** A certificate for 127.0.0.1 and localhost, signed by `ca`. */
  loopback: IssuedCertificate;
  dir: string;
  remove(): Promise<void>;
}

/** A fresh CA and a loopback server certificate, made by openssl in a temp dir. */
export async function makeTestCertificates(): Promise<TestCertificates> {
  const dir = await makeTempDir('baton-tls');
  const ca = await createClusterCa(`${dir.path}/ca`, 'baton test CA');
  const loopback = await issueCertificate(ca, `${dir.path}/certs`, 'loopback', ['127.0.0.1', 'localhost']);
  return { ca, loopback, dir: dir.path, remove: dir.remove };
}
