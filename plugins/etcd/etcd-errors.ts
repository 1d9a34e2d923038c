/**
 * Whether a failed etcd request certainly never reached etcd's log. This is what lets a proposal
 * end in NotAppendedError rather than OutcomeUnknownError, so only failures that happen before
 * the request leaves this process (or that etcd answers before proposing it to its Raft) count:
 * - gRPC found no connection to send on ("No connection established");
 * - the deadline passed while gRPC was still waiting for a connection ("Waiting for LB pick");
 * - etcd refused to queue it ("too many requests" is checked before proposing);
 * - the client was closed, or had no host to try.
 * Everything else (a timeout after sending, a dropped connection, "leader changed", "request
 * timed out") may have been committed, and is treated as such.
 */
export function certainlyNotSent(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const message = error.message;
  return (
    message.includes('No connection established') ||
    message.includes('Waiting for LB pick') ||
    message.includes('etcdserver: too many requests') ||
    message.includes('Connection pool has no hosts') ||
    error.name === 'ClientClosedError' ||
    error.name === 'BrokenCircuitError'
  );
}

/**
 * Whether etcd (or gRPC on either side) refused a request for its size: etcd checks
 * `--max-request-bytes` before proposing it to its Raft, and gRPC refuses a message over its limit
 * before the handler runs. Such a request was certainly not committed, and no retry of the same
 * bytes can succeed.
 */
export function requestTooLarge(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return /etcdserver: request is too large|message larger than max/i.test(error.message);
}

/** A short description of an etcd failure for logs and error details. */
export function describeEtcdError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message.split('\n')[0]}`;
  return String(error);
}

/** etcd compacted the revision a watch asked to start from. */
export function isCompactedError(error: unknown): boolean {
  return error instanceof Error && /compact/i.test(error.message);
}
