import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Logger } from '@baton/contracts';
import { warnIfReadableByOthers, ConfigError } from '@baton/kernel';

/**
 * TLS on a listener: the certificate it presents and its private key (PEM files), so bearer
 * tokens and peer secrets never cross the network in clear. Clients trust the certificate's
 * CA the way Node programs do (NODE_EXTRA_CA_CERTS=<ca.pem>, or a CA in the system store).
 */
export const listenerTlsSchema = z
  .object({
    /** The listener's certificate (PEM), leaf first; intermediates may follow in the same file. */
    certFile: z.string().min(1, 'give the PEM file of the listener certificate'),
    /** Its private key (PEM): readable by the owner only (chmod 600), warned otherwise. */
    keyFile: z.string().min(1, 'give the PEM file of the private key'),
    /** CA certificates (PEM) sent along with the certificate to complete its chain. */
    caFile: z.string().min(1).optional(),
  })
  .strict();

export type ListenerTls = z.output<typeof listenerTlsSchema>;

/** What node:https takes: the PEM texts of the files a listener's `tls` names. */
export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
}

/**
 * Reads the PEM files of `tls`; a file that cannot be read fails the start naming it, a key
 * readable by group or others is warned about as every secret is.
 */
export function readTlsMaterial(tls: ListenerTls, listener: string, logger?: Logger): TlsMaterial {
  const read = (path: string, what: string): Buffer => {
    try {
      return readFileSync(path);
    } catch (error) {
      throw new ConfigError(`${listener} listener tls.${what}: cannot read ${path}: ${(error as Error).message}`);
    }
  };
  const key = read(tls.keyFile, 'keyFile');
  if (logger) warnIfReadableByOthers(tls.keyFile, `${listener} listener tls.keyFile`, logger);
  return { cert: read(tls.certFile, 'certFile'), key, ...(tls.caFile ? { ca: read(tls.caFile, 'caFile') } : {}) };
}
