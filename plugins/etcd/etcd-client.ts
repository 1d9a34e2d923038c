import { Etcd3, type IOptions } from 'etcd3';
import type { Clock } from '@baton/contracts';
import { EndpointHealth } from './endpoint-health.js';
import type { EtcdConsensusOptions } from './options.js';

type FaultHandling = NonNullable<IOptions['faultHandling']>;
type HostPolicy = ReturnType<NonNullable<FaultHandling['host']>>;
type WatchBackoff = NonNullable<FaultHandling['watchBackoff']>;

/**
 * The etcd3 client as this plugin needs it: no hidden retries (a retry inside the client would
 * blur "never sent" into "maybe applied"; the plugin retries itself, knowing which is which, and
 * each of its retries is a new request that the pool sends to another endpoint when the last one
 * refused or timed out, see EndpointHealth), and both gRPC reconnects and watch re-subscriptions
 * back off within the configured bounds instead of the libraries' defaults of up to two minutes.
 */
export function createEtcdClient(
  options: EtcdConsensusOptions,
  clock: Clock,
  health: EndpointHealth = endpointHealthFor(options, clock),
): Etcd3 {
  const tls = options.tls;
  return new Etcd3({
    hosts: options.endpoints,
    auth: options.auth,
    credentials: tls && {
      rootCertificate: Buffer.from(tls.ca),
      privateKey: tls.key === undefined ? undefined : Buffer.from(tls.key),
      certChain: tls.cert === undefined ? undefined : Buffer.from(tls.cert),
    },
    dialTimeout: options.requestTimeoutMs,
    grpcOptions: {
      'grpc.initial_reconnect_backoff_ms': options.retryMinMs,
      'grpc.max_reconnect_backoff_ms': options.retryMaxMs,
      // Notice a member that vanished without closing the connection (a partition, a frozen host).
      'grpc.keepalive_time_ms': 5_000,
      'grpc.keepalive_timeout_ms': 5_000,
      'grpc.keepalive_permit_without_calls': 1,
      // Catch-up pages and snapshot chunks can exceed gRPC's default 4 MiB answer limit.
      'grpc.max_receive_message_length': 256 * 1024 * 1024,
    },
    faultHandling: {
      global: callThrough(),
      host: (endpoint) => health.policyFor(endpoint),
      watchBackoff: cappedBackoff(options.retryMinMs, options.retryMaxMs),
    },
  });
}

/** The endpoint bookkeeping of one client, with this plugin's settings. */
export function endpointHealthFor(options: EtcdConsensusOptions, clock: Clock): EndpointHealth {
  return new EndpointHealth(options.endpoints, clock, {
    unreachableMs: options.retryMaxMs,
    suspectMs: options.timeoutSuspicionMs,
  });
}

/** A policy that runs the call once, as is. */
function callThrough(): HostPolicy {
  const policy = {
    execute: <T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T) =>
      Promise.resolve().then(() => fn({ signal: new AbortController().signal })),
  };
  return policy as unknown as HostPolicy;
}

/** Watch re-subscription delays: doubling from min to max, then staying at max. */
function cappedBackoff(minMs: number, maxMs: number): WatchBackoff {
  const step = (duration: number): WatchBackoff => ({
    duration,
    next: () => step(Math.min(maxMs, duration * 2)),
  });
  // The watch manager asks the initial value for next() to get its first delay.
  return { duration: minMs, next: () => step(minMs) };
}
