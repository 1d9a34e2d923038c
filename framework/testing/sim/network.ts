import {
  type Clock,
  type Timer,
  PeerUnreachableError,
  type MemberId,
  type PeerHandlers,
  type PeerMessage,
  type PeerTransport,
  type RequestOptions,
  type Rng,
} from '@baton/contracts';

/** How one directed link misbehaves. Reordering comes from random delays within the range. */
export interface LinkConditions {
  /** Probability in [0, 1] that a message is lost. */
  dropProbability: number;
  /** Probability in [0, 1] that a delivered message arrives twice (each copy its own delay). */
  duplicateProbability: number;
  /** Delay of each copy, uniform in [minDelayMs, maxDelayMs], whole milliseconds. */
  minDelayMs: number;
  maxDelayMs: number;
}

export const PERFECT_LINK: LinkConditions = {
  dropProbability: 0,
  duplicateProbability: 0,
  minDelayMs: 1,
  maxDelayMs: 1,
};

export type DropReason =
  'random' | 'partition' | 'sender_down' | 'receiver_down' | 'unknown_member' | 'no_listener';

export interface NetworkStats {
  /** Messages handed to the network (requests and responses included). */
  sent: number;
  /** Copies that reached a handler or a waiting requester. */
  delivered: number;
  duplicated: number;
  dropped: Record<DropReason, number>;
  requests: number;
  requestTimeouts: number;
  /** Handlers that threw; the network logs nothing and carries on, as the contract asks. */
  handlerErrors: number;
}

/** One thing that happened on the network; `what` names the envelope (e.g. `message raft`). */
export type NetworkEvent =
  | { at: number; kind: 'sent' | 'delivered'; from: MemberId; to: MemberId; what: string }
  | { at: number; kind: 'dropped'; reason: DropReason; from: MemberId; to: MemberId; what: string };

type WithoutTime<E> = E extends unknown ? Omit<E, 'at'> : never;

interface MemberSlot {
  up: boolean;
  paused: boolean;
  /** Bumped by every crash: a transport of an older incarnation is dead for good. */
  incarnation: number;
  transport?: SimTransport;
  handlers: Map<string, PeerHandlers>;
  /** Deliveries that arrived while the member was paused, replayed in order on resume. */
  deferred: Array<() => void>;
}

interface PendingRequest {
  from: MemberId;
  to: MemberId;
  incarnation: number;
  timer: Timer;
  resolve(message: PeerMessage): void;
  reject(error: unknown): void;
  cleanup(): void;
}

type Envelope =
  | { kind: 'message'; channel: string; json: string }
  | { kind: 'request'; id: number; channel: string; json: string }
  | { kind: 'response'; id: number; channel: string; json: string }
  | { kind: 'failure'; id: number; reason: string };

/**
 * A simulated network between members, driven by an injected clock and rng: with a VirtualClock
 * and a SeededRng, every drop, delay, duplicate and reordering is a function of the seed. Bodies
 * cross as JSON text, so a body that does not survive JSON fails at the sender, as over HTTP.
 *
 * Faults: per-link drop/duplicate/delay, `partition(a, b)`, `cut(from, to)` (one way),
 * `isolate(m)`, `heal()`; `crash(m)` kills the member's current transport (its handlers, its
 * pending requests, anything it sends later) until `restart(m)`, after which `transport(m)`
 * gives the new incarnation its own transport; `pause(m)` holds deliveries until `resume(m)`.
 * Messages already in flight are dropped if, when they arrive, the link is cut or the receiver
 * is down.
 */
export class SimNetwork {
  private readonly members = new Map<MemberId, MemberSlot>();
  private readonly links = new Map<string, LinkConditions>();
  private readonly blocked = new Set<string>();
  private readonly isolated = new Set<MemberId>();
  private readonly pending = new Map<number, PendingRequest>();
  private readonly observers = new Set<(event: NetworkEvent) => void>();
  private nextRequestId = 1;
  private defaults: LinkConditions;
  private readonly counters: NetworkStats = {
    sent: 0,
    delivered: 0,
    duplicated: 0,
    dropped: {
      random: 0,
      partition: 0,
      sender_down: 0,
      receiver_down: 0,
      unknown_member: 0,
      no_listener: 0,
    },
    requests: 0,
    requestTimeouts: 0,
    handlerErrors: 0,
  };

  constructor(
    private readonly clock: Clock,
    private readonly rng: Rng,
    defaults: Partial<LinkConditions> = {},
  ) {
    this.defaults = validLink({ ...PERFECT_LINK, ...defaults });
  }

  /** The transport of `member`'s current incarnation (created on first use, then the same one). */
  transport(member: MemberId): PeerTransport {
    if (typeof member !== 'string' || member.length === 0) {
      throw new TypeError(`a member id must be a non-empty string, got ${JSON.stringify(member)}`);
    }
    const slot = this.slot(member);
    slot.transport ??= new SimTransport(this, member, slot.incarnation);
    return slot.transport;
  }

  /** Every member that ever had a transport. */
  memberIds(): MemberId[] {
    return [...this.members.keys()];
  }

  isUp(member: MemberId): boolean {
    return this.members.get(member)?.up ?? false;
  }

  /** Conditions for every link without its own (applies to messages sent from now on). */
  setDefaults(conditions: Partial<LinkConditions>): void {
    this.defaults = validLink({ ...this.defaults, ...conditions });
  }

  /** Conditions for the link between `a` and `b`, both ways unless `oneWay` (then a -> b only). */
  setLink(
    a: MemberId,
    b: MemberId,
    conditions: Partial<LinkConditions>,
    options: { oneWay?: boolean } = {},
  ): void {
    this.links.set(linkKey(a, b), validLink({ ...this.linkConditions(a, b), ...conditions }));
    if (!options.oneWay)
      this.links.set(linkKey(b, a), validLink({ ...this.linkConditions(b, a), ...conditions }));
  }

  linkConditions(from: MemberId, to: MemberId): LinkConditions {
    return this.links.get(linkKey(from, to)) ?? this.defaults;
  }

  /** No message crosses between the two groups, either way, until `heal`. */
  partition(groupA: readonly MemberId[], groupB: readonly MemberId[]): void {
    for (const a of groupA) {
      for (const b of groupB) {
        if (a === b) throw new RangeError(`member ${a} cannot be on both sides of a partition`);
        this.blocked.add(linkKey(a, b));
        this.blocked.add(linkKey(b, a));
      }
    }
  }

  /** Messages from `from` to `to` are lost until `heal` (the other direction still works). */
  cut(from: MemberId, to: MemberId): void {
    this.blocked.add(linkKey(from, to));
  }

  /** `member` can neither send to nor hear from anyone (itself included) until `heal`. */
  isolate(member: MemberId): void {
    this.isolated.add(member);
  }

  /** Undoes every partition, cut and isolation (crashes and pauses stay). */
  heal(): void {
    this.blocked.clear();
    this.isolated.clear();
  }

  /**
   * The member's process dies: its handlers are gone, its pending requests never answer, what
   * it sends from now on is lost, and deliveries to it are dropped. Idempotent.
   */
  crash(member: MemberId): void {
    const slot = this.slot(member);
    if (!slot.up) return;
    slot.up = false;
    slot.paused = false;
    slot.incarnation += 1;
    slot.transport = undefined;
    slot.handlers.clear();
    slot.deferred = [];
    for (const [id, request] of this.pending) {
      if (request.from === member) {
        request.cleanup();
        this.pending.delete(id);
      }
    }
  }

  /** The member is reachable again; its new process gets a fresh transport from `transport()`. */
  restart(member: MemberId): void {
    this.slot(member).up = true;
  }

  /** Deliveries to `member` wait (in order) until `resume`, as for a process stopped by a GC or a debugger. */
  pause(member: MemberId): void {
    const slot = this.slot(member);
    if (slot.up) slot.paused = true;
  }

  resume(member: MemberId): void {
    const slot = this.slot(member);
    slot.paused = false;
    const deferred = slot.deferred;
    slot.deferred = [];
    for (const deliver of deferred) deliver();
  }

  /**
   * Calls `observer` for every message sent, delivered or dropped (with why), stamped with
   * the clock: what a failing seed's report prints to show how the run got there.
   */
  onEvent(observer: (event: NetworkEvent) => void): () => void {
    const subscription = (event: NetworkEvent) => observer(event);
    this.observers.add(subscription);
    return () => void this.observers.delete(subscription);
  }

  stats(): NetworkStats {
    return { ...this.counters, dropped: { ...this.counters.dropped } };
  }

  // ---- used by SimTransport -----------------------------------------------------------------

  /** @internal */
  isCurrent(member: MemberId, incarnation: number): boolean {
    const slot = this.members.get(member);
    return slot !== undefined && slot.up && slot.incarnation === incarnation;
  }

  /** @internal */
  listen(
    member: MemberId,
    incarnation: number,
    channel: string,
    handlers: PeerHandlers,
  ): () => void {
    const slot = this.slot(member);
    if (slot.incarnation !== incarnation) return () => {};
    if (slot.handlers.has(channel)) {
      throw new Error(
        `member ${member} already listens on channel "${channel}"; remove those handlers first`,
      );
    }
    slot.handlers.set(channel, handlers);
    return () => {
      if (slot.handlers.get(channel) === handlers) slot.handlers.delete(channel);
    };
  }

  /** @internal */
  send(from: MemberId, incarnation: number, to: MemberId, message: PeerMessage): void {
    const json = encode(message.body, from, to);
    this.dispatch(from, incarnation, to, { kind: 'message', channel: message.channel, json });
  }

  /** @internal */
  request(
    from: MemberId,
    incarnation: number,
    to: MemberId,
    message: PeerMessage,
    options: RequestOptions,
  ): Promise<PeerMessage> {
    if (!(options.timeoutMs > 0) || !Number.isFinite(options.timeoutMs)) {
      return Promise.reject(
        new RangeError(
          `request timeoutMs must be a positive finite number, got ${options.timeoutMs}`,
        ),
      );
    }
    let json: string;
    try {
      json = encode(message.body, from, to);
    } catch (error) {
      return Promise.reject(error);
    }
    const signal = options.signal;
    if (signal?.aborted)
      return Promise.reject(
        new PeerUnreachableError(to, 'the request was aborted', { cause: signal.reason }),
      );
    this.counters.requests += 1;
    const id = this.nextRequestId++;
    return new Promise<PeerMessage>((resolve, reject) => {
      const onAbort = () => {
        if (!this.pending.delete(id)) return;
        request.cleanup();
        reject(new PeerUnreachableError(to, 'the request was aborted', { cause: signal?.reason }));
      };
      const timer = this.clock.setTimer(options.timeoutMs, () => {
        if (!this.pending.delete(id)) return;
        request.cleanup();
        this.counters.requestTimeouts += 1;
        reject(new PeerUnreachableError(to, `no answer within ${options.timeoutMs} ms`));
      });
      const request: PendingRequest = {
        from,
        to,
        incarnation,
        timer,
        resolve,
        reject,
        cleanup: () => {
          timer.cancel();
          signal?.removeEventListener('abort', onAbort);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, request);
      this.dispatch(from, incarnation, to, { kind: 'request', id, channel: message.channel, json });
    });
  }

  // ---- internals ------------------------------------------------------------------------------

  private slot(member: MemberId): MemberSlot {
    let slot = this.members.get(member);
    if (!slot) {
      slot = { up: true, paused: false, incarnation: 0, handlers: new Map(), deferred: [] };
      this.members.set(member, slot);
    }
    return slot;
  }

  private isBlocked(from: MemberId, to: MemberId): boolean {
    return this.isolated.has(from) || this.isolated.has(to) || this.blocked.has(linkKey(from, to));
  }

  private drop(reason: DropReason, from: MemberId, to: MemberId, envelope: Envelope): void {
    this.counters.dropped[reason] += 1;
    this.emit({ kind: 'dropped', reason, from, to, what: describeEnvelope(envelope) });
  }

  private emit(event: WithoutTime<NetworkEvent>): void {
    if (this.observers.size === 0) return;
    const stamped = { at: this.clock.now(), ...event } as NetworkEvent;
    for (const observer of [...this.observers]) observer(stamped);
  }

  /** Puts one envelope on the wire: it may be lost, delayed, duplicated; each copy arrives alone. */
  private dispatch(from: MemberId, incarnation: number, to: MemberId, envelope: Envelope): void {
    this.counters.sent += 1;
    this.emit({ kind: 'sent', from, to, what: describeEnvelope(envelope) });
    if (!this.isCurrent(from, incarnation)) return this.drop('sender_down', from, to, envelope);
    if (this.isBlocked(from, to)) return this.drop('partition', from, to, envelope);
    const link = this.linkConditions(from, to);
    if (link.dropProbability > 0 && this.rng.next() < link.dropProbability)
      return this.drop('random', from, to, envelope);
    const copies =
      link.duplicateProbability > 0 && this.rng.next() < link.duplicateProbability ? 2 : 1;
    if (copies === 2) this.counters.duplicated += 1;
    for (let copy = 0; copy < copies; copy++) {
      const span = link.maxDelayMs - link.minDelayMs;
      const delay = link.minDelayMs + (span > 0 ? this.rng.int(span + 1) : 0);
      this.clock.setTimer(delay, () => this.arrive(from, to, envelope));
    }
  }

  private arrive(from: MemberId, to: MemberId, envelope: Envelope): void {
    const slot = this.members.get(to);
    if (!slot) return this.drop('unknown_member', from, to, envelope);
    if (!slot.up) return this.drop('receiver_down', from, to, envelope);
    if (this.isBlocked(from, to)) return this.drop('partition', from, to, envelope);
    if (slot.paused) {
      slot.deferred.push(() => this.arrive(from, to, envelope));
      return;
    }
    switch (envelope.kind) {
      case 'message':
        return this.deliverMessage(slot, from, to, envelope);
      case 'request':
        return this.serveRequest(slot, from, to, envelope);
      case 'response':
      case 'failure':
        return this.settleRequest(to, envelope);
    }
  }

  private deliverMessage(
    slot: MemberSlot,
    from: MemberId,
    to: MemberId,
    envelope: Extract<Envelope, { kind: 'message' }>,
  ): void {
    const handlers = slot.handlers.get(envelope.channel);
    if (!handlers) return this.drop('no_listener', from, to, envelope);
    this.counters.delivered += 1;
    this.emit({ kind: 'delivered', from, to, what: describeEnvelope(envelope) });
    try {
      handlers.onMessage(from, { channel: envelope.channel, body: JSON.parse(envelope.json) });
    } catch {
      this.counters.handlerErrors += 1;
    }
  }

  private serveRequest(
    slot: MemberSlot,
    from: MemberId,
    to: MemberId,
    request: Extract<Envelope, { kind: 'request' }>,
  ): void {
    const { id, channel, json } = request;
    const responderIncarnation = slot.incarnation;
    const reply = (envelope: Envelope) => this.dispatch(to, responderIncarnation, from, envelope);
    const onRequest = slot.handlers.get(channel)?.onRequest;
    if (!onRequest) {
      this.drop('no_listener', from, to, request);
      return reply({
        kind: 'failure',
        id,
        reason: `member ${to} serves no requests on channel "${channel}"`,
      });
    }
    this.counters.delivered += 1;
    this.emit({ kind: 'delivered', from, to, what: describeEnvelope(request) });
    let answer: Promise<PeerMessage>;
    try {
      answer = Promise.resolve(onRequest(from, { channel, body: JSON.parse(json) }));
    } catch (error) {
      answer = Promise.reject(error);
    }
    answer.then(
      (response) => {
        let json: string;
        try {
          json = encode(response?.body, to, from);
        } catch (error) {
          return reply({ kind: 'failure', id, reason: String(error) });
        }
        reply({ kind: 'response', id, channel: response.channel, json });
      },
      (error: unknown) => {
        this.counters.handlerErrors += 1;
        reply({
          kind: 'failure',
          id,
          reason: `its handler failed: ${error instanceof Error ? error.message : String(error)}`,
        });
      },
    );
  }

  private settleRequest(
    requester: MemberId,
    envelope: Extract<Envelope, { kind: 'response' | 'failure' }>,
  ): void {
    const request = this.pending.get(envelope.id);
    // Timed out, aborted, answered already (a duplicate), or its process died: nobody listens.
    if (
      !request ||
      request.from !== requester ||
      !this.isCurrent(request.from, request.incarnation)
    )
      return;
    this.pending.delete(envelope.id);
    request.cleanup();
    this.counters.delivered += 1;
    this.emit({
      kind: 'delivered',
      from: request.to,
      to: requester,
      what: describeEnvelope(envelope),
    });
    if (envelope.kind === 'response')
      request.resolve({ channel: envelope.channel, body: JSON.parse(envelope.json) });
    else request.reject(new PeerUnreachableError(requester, envelope.reason));
  }
}

/** The PeerTransport of one incarnation of one member. */
class SimTransport implements PeerTransport {
  constructor(
    private readonly network: SimNetwork,
    readonly self: MemberId,
    private readonly incarnation: number,
  ) {}

  send(to: MemberId, message: PeerMessage): void {
    this.network.send(this.self, this.incarnation, to, message);
  }

  request(to: MemberId, message: PeerMessage, options: RequestOptions): Promise<PeerMessage> {
    return this.network.request(this.self, this.incarnation, to, message, options);
  }

  listen(channel: string, handlers: PeerHandlers): () => void {
    return this.network.listen(this.self, this.incarnation, channel, handlers);
  }
}

function linkKey(from: MemberId, to: MemberId): string {
  return `${from}\u0000${to}`;
}

function encode(body: unknown, from: MemberId, to: MemberId): string {
  const json = JSON.stringify(body);
  if (json === undefined) {
    throw new TypeError(
      `message from ${from} to ${to}: the body is not JSON-serialisable (got ${typeof body})`,
    );
  }
  return json;
}

function validLink(link: LinkConditions): LinkConditions {
  const probability = (name: 'dropProbability' | 'duplicateProbability') => {
    if (!(link[name] >= 0 && link[name] <= 1))
      throw new RangeError(`${name} must be within [0, 1], got ${link[name]}`);
  };
  probability('dropProbability');
  probability('duplicateProbability');
  if (
    !Number.isInteger(link.minDelayMs) ||
    !Number.isInteger(link.maxDelayMs) ||
    link.minDelayMs < 0 ||
    link.maxDelayMs < link.minDelayMs
  ) {
    throw new RangeError(
      `delays must be whole milliseconds with 0 <= minDelayMs <= maxDelayMs, got [${link.minDelayMs}, ${link.maxDelayMs}]`,
    );
  }
  return { ...link };
}

function describeEnvelope(envelope: Envelope): string {
  switch (envelope.kind) {
    case 'message':
      return `message ${envelope.channel}`;
    case 'request':
      return `request #${envelope.id} ${envelope.channel}`;
    case 'response':
      return `response #${envelope.id}`;
    case 'failure':
      return `failure #${envelope.id}`;
  }
}
