import type { Socket } from 'node:net';
import { z } from 'zod';
import type { Clock, Timer } from '@baton/contracts';

/**
 * How many connections a listener holds, and how long a connection may take to say what it
 * wants. Anchors: nginx `limit_conn`, Kafka `max.connections` / `max.connections.per.ip`.
 */
export const admissionLimitsSchema = z
  .object({
    /** Connections open at once on this listener, proven or not. */
    maxConnections: z.number().int().min(1).default(8_192),
    /** Connections from one client address that have not yet presented a valid credential. */
    maxUnprovenPerAddress: z.number().int().min(1).default(1_024),
    /** A new connection must deliver a complete request head within this (idle and slow-header clients). */
    firstRequestMs: z.number().int().min(100).default(10_000),
    /** A request's header section must arrive within this (Node's headersTimeout; its default is 60 s). */
    headersTimeoutMs: z.number().int().min(100).default(10_000),
    /** An idle keep-alive connection is closed after this. */
    keepAliveTimeoutMs: z.number().int().min(100).default(5_000),
  })
  .strict();

export type AdmissionLimits = z.output<typeof admissionLimitsSchema>;

export const DEFAULT_ADMISSION_LIMITS: AdmissionLimits = admissionLimitsSchema.parse({});

/** Why a connection was closed by admission, as counted. */
export type AdmissionRefusal = 'listener_full' | 'address_full' | 'evicted' | 'first_request_timeout';

interface Tracked {
  socket: Socket;
  address: string;
  proven: boolean;
  /** Requests begun and not yet answered on this connection. */
  active: number;
  firstRequest?: Timer;
}

/** Admitted raw sockets, so the request path can find its connection's record. */
const trackers = new WeakMap<Socket, { tracked: Tracked; prove(): void; release(): void }>();

/**
 * Admits connections to one listener before a byte of them is parsed, so a flood of idle,
 * slow or anonymous connections cannot take the process's file descriptors (which its own
 * lease renewals and Raft traffic need) or crowd out the members and clients that hold a
 * credential.
 *
 * A connection is *unproven* until a request on it presents a valid credential (a bearer
 * token or a peer secret: `proveConnection`). Unproven connections are capped per client
 * address and, with the proven ones, per listener. When a cap is reached the oldest idle
 * unproven connection (no request in progress) is closed to make room, so a member or a
 * client with a token that opens a fresh connection in the middle of a flood still gets in
 * and proves itself on its first request; only when no idle unproven connection is left is
 * the new one refused. A new connection that delivers no request head within
 * `firstRequestMs` is closed: Node's own header timeout only starts with the first byte.
 */
export class ConnectionAdmission {
  private readonly all = new Set<Tracked>();
  /** Unproven connections, oldest first, overall and per address. */
  private readonly unproven = new Set<Tracked>();
  private readonly unprovenByAddress = new Map<string, Set<Tracked>>();

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly clock: Clock,
    private readonly onRefusal?: (reason: AdmissionRefusal) => void,
  ) {}

  /** The listener's 'connection' handler: admits the raw socket or destroys it. */
  admit(socket: Socket): void {
    const address = socket.remoteAddress ?? 'unknown';
    const sameAddress = this.unprovenByAddress.get(address);
    if (sameAddress && sameAddress.size >= this.limits.maxUnprovenPerAddress && !this.evictOldestIdle(sameAddress)) {
      return this.refuse(socket, 'address_full');
    }
    if (this.all.size >= this.limits.maxConnections && !this.evictOldestIdle(this.unproven)) {
      return this.refuse(socket, 'listener_full');
    }
    const tracked: Tracked = { socket, address, proven: false, active: 0 };
    tracked.firstRequest = this.clock.setTimer(this.limits.firstRequestMs, () => {
      tracked.firstRequest = undefined;
      this.count('first_request_timeout');
      socket.destroy();
    });
    this.all.add(tracked);
    this.unproven.add(tracked);
    let group = this.unprovenByAddress.get(address);
    if (!group) this.unprovenByAddress.set(address, (group = new Set()));
    group.add(tracked);
    trackers.set(socket, { tracked, prove: () => this.prove(tracked), release: () => this.forget(tracked) });
    socket.once('close', () => this.forget(tracked));
  }

  /** A request began on `socket` (the TLS socket or the raw one); call `done` when it is answered. */
  requestBegan(socket: Socket): () => void {
    const found = trackers.get(rawSocketOf(socket));
    if (!found) return () => undefined;
    const { tracked } = found;
    tracked.firstRequest?.cancel();
    tracked.firstRequest = undefined;
    tracked.active += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      tracked.active -= 1;
    };
  }

  private prove(tracked: Tracked): void {
    if (tracked.proven) return;
    tracked.proven = true;
    this.dropUnproven(tracked);
  }

  private evictOldestIdle(candidates: Set<Tracked>): boolean {
    for (const tracked of candidates) {
      if (tracked.active > 0) continue;
      this.count('evicted');
      this.forget(tracked);
      tracked.socket.destroy();
      return true;
    }
    return false;
  }

  private refuse(socket: Socket, reason: AdmissionRefusal): void {
    this.count(reason);
    socket.destroy();
  }

  private count(reason: AdmissionRefusal): void {
    this.onRefusal?.(reason);
  }

  private forget(tracked: Tracked): void {
    tracked.firstRequest?.cancel();
    tracked.firstRequest = undefined;
    this.all.delete(tracked);
    this.dropUnproven(tracked);
  }

  private dropUnproven(tracked: Tracked): void {
    this.unproven.delete(tracked);
    const group = this.unprovenByAddress.get(tracked.address);
    if (!group) return;
    group.delete(tracked);
    if (group.size === 0) this.unprovenByAddress.delete(tracked.address);
  }
}

/**
 * A request on this connection presented a valid credential: the connection no longer counts
 * against the unproven caps and is never evicted to make room. Safe to call on any socket.
 */
export function proveConnection(socket: Socket | undefined | null): void {
  if (socket) trackers.get(rawSocketOf(socket))?.prove();
}

/**
 * The connection now carries a long-lived answer (an event stream) that its listener bounds on
 * its own: it stops counting against the caps here, so idle watchers cannot crowd out requests.
 */
export function releaseConnection(socket: Socket | undefined | null): void {
  if (socket) trackers.get(rawSocketOf(socket))?.release();
}

/** Whether a request on this connection already presented a valid credential. */
export function isProvenConnection(socket: Socket): boolean {
  return trackers.get(rawSocketOf(socket))?.tracked.proven ?? false;
}

/** The TCP socket under a TLS socket (Node keeps it as `_parent`), or the socket itself. */
function rawSocketOf(socket: Socket): Socket {
  return (socket as Socket & { _parent?: Socket })._parent ?? socket;
}
