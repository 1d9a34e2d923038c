/** Why fetch failed, in words: the system error code when there is one (ECONNREFUSED...). */
export function connectionFailure(error: unknown, timeoutMs: number): string {
  if (isTimeout(error)) return `no answer within ${timeoutMs} ms`;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED')
    return 'connection refused (is the node running, on this port?)';
  if (cause?.code === 'ENOTFOUND') return 'no such host';
  if (cause?.code && UNTRUSTED_CERTIFICATE.has(cause.code))
    return `the node's TLS certificate is not trusted (${cause.code}): trust its CA with NODE_EXTRA_CA_CERTS=<ca.pem>`;
  if (cause?.code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `the node's TLS certificate does not name this address: ${cause.message ?? ''}`.trim();
  if (cause?.code === 'UND_ERR_SOCKET' || cause?.code === 'ECONNRESET')
    return `the connection was closed before an answer (${cause.message ?? cause.code}); if the node serves HTTPS, give an https:// address`;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ''}`;
  // fetch refuses some ports outright (1, 6000, ...: the WHATWG "bad ports").
  if (cause?.message === 'bad port')
    return 'this port is one HTTP clients refuse to connect to; give the port the node listens on';
  if (cause?.message) return cause.message;
  return (error as Error).message ?? String(error);
}

/** The codes of a certificate chain the client does not trust (Node's X509 verify errors). */
const UNTRUSTED_CERTIFICATE = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

/** True when fetch gave up because the wait ran out (the request may have reached the server). */
export function isTimeout(error: unknown): boolean {
  return (
    error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError')
  );
}
