import { execFile } from 'node:child_process';
import { chmod, rm, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { privateDirectory } from './private-files.js';

const run = promisify(execFile);

/** A certificate authority of one cluster: its certificate (what clients trust) and its key. */
export interface ClusterCa {
  certFile: string;
  keyFile: string;
}

/** A listener's certificate and key, as a listener's `tls` config names them. */
export interface IssuedCertificate {
  certFile: string;
  keyFile: string;
}

/** Days a generated certificate is valid: a local cluster is rebuilt long before. */
const VALID_DAYS = '825';

/** Runs openssl; a missing binary or a refusal says what to install or what failed. */
async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args);
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new Error('openssl is not installed: install it to generate TLS certificates (e.g. apt-get install openssl)');
    throw new Error(`openssl ${args[0]} failed: ${(e.stderr ?? e.message).trim()}`);
  }
}

/**
 * Creates a cluster CA under `dir` (0700): an EC P-256 key (0600) and a self-signed CA
 * certificate. Clients trust the cluster by trusting `ca.pem` (NODE_EXTRA_CA_CERTS=ca.pem).
 */
export async function createClusterCa(dir: string, name = 'baton cluster CA'): Promise<ClusterCa> {
  await privateDirectory(dir);
  const ca = { certFile: join(dir, 'ca.pem'), keyFile: join(dir, 'ca.key') };
  await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', ca.keyFile]);
  await chmod(ca.keyFile, 0o600);
  await openssl([
    'req', '-x509', '-new', '-key', ca.keyFile, '-out', ca.certFile, '-days', VALID_DAYS, '-subj', `/CN=${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return ca;
}

/**
 * Issues a server certificate signed by `ca` for `hosts` (IP addresses and DNS names, all in
 * subjectAltName), written as `<name>.pem` and `<name>.key` (0600) under `dir`.
 */
export async function issueCertificate(ca: ClusterCa, dir: string, name: string, hosts: readonly string[]): Promise<IssuedCertificate> {
  await privateDirectory(dir);
  const issued = { certFile: join(dir, `${name}.pem`), keyFile: join(dir, `${name}.key`) };
  const request = join(dir, `${name}.csr`);
  const extensions = join(dir, `${name}.ext`);
  const altNames = hosts.map((host) => (isIP(host) ? `IP:${host}` : `DNS:${host}`)).join(',');
  await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', issued.keyFile]);
  await chmod(issued.keyFile, 0o600);
  await openssl(['req', '-new', '-key', issued.keyFile, '-out', request, '-subj', `/CN=${name}`]);
  await writeFile(extensions, `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=${altNames}\n`);
  await openssl([
    'x509', '-req', '-in', request, '-CA', ca.certFile, '-CAkey', ca.keyFile, '-CAcreateserial',
    '-out', issued.certFile, '-days', VALID_DAYS, '-extfile', extensions,
  ]);
  await rm(request, { force: true });
  await rm(extensions, { force: true });
  return issued;
}
