import { BatonError } from '@baton/contracts';

/**
 * What an S3 failure means for the store:
 * - `missing`: the object is not there (get/head answer undefined, delete succeeds);
 * - `precondition`: a create-only put found the key present;
 * - `transient`: the network or the server failed; worth retrying;
 * - `misconfigured`: retrying cannot help (credentials, permissions, missing bucket), so fail
 *   at once with a message that says what to fix.
 */
export type S3FailureKind = 'missing' | 'precondition' | 'transient' | 'misconfigured';

const MISSING = new Set(['NoSuchKey', 'NotFound']);
const MISCONFIGURED: Record<string, string> = {
  NoSuchBucket: 'the bucket does not exist: create it, or set createBucket: true',
  AccessDenied: 'access denied: check the credentials and the policy of the user on this bucket',
  InvalidAccessKeyId: 'the access key is unknown to the server: check accessKey',
  SignatureDoesNotMatch: 'the server rejected the request signature: check secretKey (and region)',
  AuthorizationHeaderMalformed: 'the request signature names the wrong region: check region',
  PermanentRedirect: 'the bucket lives elsewhere: check endpoint and region',
  InvalidBucketName: 'the bucket name is not valid on this server',
  ExpiredToken: 'the session token expired: renew the credentials',
  InvalidToken: 'the session token is not valid: check sessionToken',
  NotImplemented: 'the server does not implement this S3 request',
};

/** A request whose connection stayed silent for too long. */
export class SocketTimeoutError extends Error {
  readonly code = 'ESOCKETTIMEDOUT';
  constructor(ms: number) {
    super(`no data from the server for ${ms} ms`);
  }
}

/** Node's codes for a server certificate it will not trust: retrying cannot fix those. */
const UNTRUSTED_CERTIFICATE =
  /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_\w+|ERR_TLS_CERT_ALTNAME_INVALID)$/;

export function classifyS3Error(error: unknown): S3FailureKind {
  if (error instanceof BatonError) return 'misconfigured';
  const code = (error as { code?: unknown })?.code;
  if (typeof code === 'string') {
    if (UNTRUSTED_CERTIFICATE.test(code)) return 'misconfigured';
    if (MISSING.has(code)) return 'missing';
    if (code === 'PreconditionFailed') return 'precondition';
    if (code in MISCONFIGURED) return 'misconfigured';
  }
  // Everything else (refused or reset connections, timeouts, 5xx, 429, throttling, a body cut
  // short) may well pass on the next try.
  return 'transient';
}

/** A short account of the failure for an operator: the S3 code or network error and its meaning. */
export function describeS3Error(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof code === 'string' && code in MISCONFIGURED) return `${MISCONFIGURED[code]} (${code})`;
  if (typeof code === 'string' && UNTRUSTED_CERTIFICATE.test(code)) {
    return `the server certificate is not trusted (${code}: ${message}): set tls.ca to the certificate authority that signed it`;
  }
  const status = /Retryable HTTP status: (\d+)/.exec(message)?.[1];
  if (status) return `the server answered HTTP ${status}`;
  return typeof code === 'string' && code && !message.includes(code)
    ? `${code}: ${message}`
    : message;
}
