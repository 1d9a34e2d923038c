import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createClusterCa, issueCertificate, type ClusterCa, type IssuedCertificate } from './cluster-certificates.js';
import type { ClusterRecord } from './cluster-record.js';

/** The TLS material of a local cluster: its CA and one loopback certificate per member. */
export interface LocalClusterTls {
  /** What a client trusts to reach the members (NODE_EXTRA_CA_CERTS). */
  caFile: string;
  certificateOf(member: string): IssuedCertificate;
}

/** `<dataDir>/tls`: the cluster CA (ca.pem, ca.key) and every member's certificate and key. */
export function clusterTlsDir(dataDir: string): string {
  return join(resolve(dataDir), 'tls');
}

/**
 * The cluster's TLS material when its record asks for TLS, else undefined. A CA and the
 * certificates a previous start generated are kept (clients already trust that CA); what is
 * missing is generated with openssl. Keys are 0600 in a 0700 directory.
 */
export async function localClusterTls(dataDir: string, record: ClusterRecord, members: readonly string[]): Promise<LocalClusterTls | undefined> {
  if (!record.tls) return undefined;
  const dir = clusterTlsDir(dataDir);
  const ca: ClusterCa = { certFile: join(dir, 'ca.pem'), keyFile: join(dir, 'ca.key') };
  if (!existsSync(ca.certFile) || !existsSync(ca.keyFile)) Object.assign(ca, await createClusterCa(dir, 'baton local cluster CA'));
  const certificates = new Map<string, IssuedCertificate>();
  for (const member of members) {
    const issued = { certFile: join(dir, `${member}.pem`), keyFile: join(dir, `${member}.key`) };
    const present = existsSync(issued.certFile) && existsSync(issued.keyFile);
    certificates.set(member, present ? issued : await issueCertificate(ca, dir, member, ['127.0.0.1', 'localhost']));
  }
  return {
    caFile: ca.certFile,
    certificateOf: (member) => {
      const found = certificates.get(member);
      if (!found) throw new Error(`no certificate was issued for ${member}`);
      return found;
    },
  };
}

/**
 * The certificate of `baton up`'s own control listener (control-server.ts), named apart from
 * every member's: that listener is no member, and a member's key stays with its process.
 */
const CONTROL_LISTENER_CERTIFICATE = 'up-control';

/** What the control listener of a TLS cluster presents, and the CA its clients trust it by. */
export interface ControlListenerTls {
  certificate: IssuedCertificate;
  caFile: string;
}

/**
 * The control listener's certificate when the record asks for TLS (issued by the cluster CA
 * on first need, kept after), else undefined: the admin token then never crosses loopback in
 * clear, as it does not on the members' listeners.
 */
export async function controlListenerTls(dataDir: string, record: ClusterRecord): Promise<ControlListenerTls | undefined> {
  const tls = await localClusterTls(dataDir, record, [CONTROL_LISTENER_CERTIFICATE]);
  return tls && { certificate: tls.certificateOf(CONTROL_LISTENER_CERTIFICATE), caFile: tls.caFile };
}
