import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type Koa from 'koa';
import { type Clock, BatonError, type Logger } from '@baton/contracts';
import type { Lifecycle } from '@baton/kernel';
import { answerClientError } from './client-error.js';
import {
  ConnectionAdmission,
  DEFAULT_ADMISSION_LIMITS,
  isProvenConnection,
  type AdmissionLimits,
  type AdmissionRefusal,
} from './connection-admission.js';
import { RequestPacer } from './request-pacer.js';
import { isLongLivedResponse } from './event-stream.js';
import { readTlsMaterial, type ListenerTls } from './listener-tls.js';
import { lingerOnClose } from './lingering-close.js';

export interface HttpServerOptions {
  app: Koa<any, any>;
  /** 0 lets the OS choose a free port; `start` returns the one bound. */
  port: number;
  /** Defaults to 127.0.0.1: exposing a listener beyond loopback is a deliberate choice. */
  host?: string;
  /** Arms the drain deadline on stop. */
  clock: Clock;
  logger?: Logger;
  /** Names the listener in logs and errors ("control", "public"). */
  name?: string;
  /** How long in-flight requests may run on after stop before their connections are cut. */
  drainMs?: number;
  /** Serve HTTPS with this certificate and key instead of plain HTTP. */
  tls?: ListenerTls;
  /** Connection caps and deadlines (connection-admission.ts); the defaults suit a client listener. */
  admission?: Partial<AdmissionLimits>;
  /** Told of every connection admission closed, e.g. to count it in /metrics. */
  onRefusal?: (reason: AdmissionRefusal) => void;
}

export interface BoundAddress {
  host: string;
  port: number;
  /** `http://host:port` (`https://` with tls), ready for fetch. */
  url: string;
}

/** The listener could not bind: the port is taken, the address is not local, no permission. */
export class HttpListenError extends BatonError {
  constructor(name: string, host: string, port: number, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException)?.code;
    const hint =
      code === 'EADDRINUSE'
        ? 'another process holds it: stop that process or configure another port'
        : code === 'EADDRNOTAVAIL'
          ? 'that address is not on this machine: configure a local address'
          : code === 'EACCES'
            ? 'binding needs privileges: use a port above 1023'
            : (cause as Error)?.message ?? String(cause);
    super('http_listen', `${name} listener cannot bind ${host}:${port}: ${hint}`, { cause });
  }
}

const DEFAULT_DRAIN_MS = 5_000;

/**
 * A koa app on a Node HTTP server with an explicit lifecycle, so the host opens it after the
 * things it serves and closes it before them. `stop` refuses new connections, closes idle
 * keep-alive connections at once, lets in-flight requests finish (each then closes its
 * connection), and cuts whatever is still open when the drain deadline passes.
 */
export class HttpServer implements Lifecycle {
  private server?: Server;
  private bound?: BoundAddress;
  private stopping?: Promise<void>;
  private readonly name: string;
  /** Responses not yet finished: on stop they are told to close their connection when done. */
  private readonly inFlight = new Set<ServerResponse>();

  constructor(private readonly options: HttpServerOptions) {
    this.name = options.name ?? 'http';
  }

  /** The bound address; only after start. */
  get address(): BoundAddress {
    if (!this.bound) throw new Error(`${this.name} listener is not started`);
    return this.bound;
  }

  /** The host's lifecycle hook; `listen` is the same, returning the bound address. */
  async start(): Promise<void> {
    await this.listen();
  }

  async listen(): Promise<BoundAddress> {
    if (this.server) throw new Error(`${this.name} listener was already started`);
    const host = this.options.host ?? '127.0.0.1';
    const tls = this.options.tls;
    // The key files are read at every start, so a renewed certificate is served after a restart.
    const server: Server = tls ? createTlsServer(readTlsMaterial(tls, this.name, this.options.logger)) : createServer();
    this.server = server;
    const limits = { ...DEFAULT_ADMISSION_LIMITS, ...this.options.admission };
    const admission = new ConnectionAdmission(limits, this.options.clock, this.options.onRefusal);
    // Node's defaults (60 s for headers, no deadline at all before the first byte) let a few
    // thousand idle clients hold a member's descriptors for minutes.
    server.headersTimeout = limits.headersTimeoutMs;
    server.keepAliveTimeout = limits.keepAliveTimeoutMs;
    // The raw TCP socket, for TLS listeners too: admitted before its handshake costs anything.
    server.on('connection', (socket: Socket) => admission.admit(socket));
    // Registered before the app, so it sees every response before koa writes it.
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (this.stopping) res.shouldKeepAlive = false;
      this.inFlight.add(res);
      const answered = admission.requestBegan(req.socket);
      res.on('close', () => {
        answered();
        this.inFlight.delete(res);
      });
      res.on('finish', () => {
        if (this.stopping) server.closeIdleConnections();
      });
    });
    // A burst of new requests from strangers is spread over turns of the event loop.
    server.on('request', new RequestPacer(this.options.app.callback(), (req) => isProvenConnection(req.socket)).handle);
    // A request the parser refuses (431, 400) is answered as problem+json like every other refusal.
    server.on('clientError', answerClientError);
    // An early answer that closes its connection (413, 401) reaches a client still sending.
    server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => lingerOnClose(socket, this.options.clock));
    await new Promise<void>((resolve, reject) => {
      const onError = (error: unknown) => reject(new HttpListenError(this.name, host, this.options.port, error));
      server.once('error', onError);
      server.listen(this.options.port, host, () => {
        server.off('error', onError);
        resolve();
      });
    }).catch((error) => {
      this.server = undefined;
      throw error;
    });
    server.on('error', (error) => this.options.logger?.error({ err: error }, `${this.name} listener failed`));
    // A client that speaks plain HTTP to the TLS port, or fails the handshake, only loses its
    // own connection; it is worth a debug line, not a warning per port scan.
    server.on('tlsClientError', (error: Error) => this.options.logger?.debug({ err: error.message }, `${this.name} listener: TLS handshake refused`));
    const info = server.address() as AddressInfo;
    const urlHost = info.family === 'IPv6' ? `[${info.address}]` : info.address;
    this.bound = { host: info.address, port: info.port, url: `${tls ? 'https' : 'http'}://${urlHost}:${info.port}` };
    this.options.logger?.info({ listener: this.name, url: this.bound.url }, `${this.name} listener started`);
    return this.bound;
  }

  /** Idempotent; resolves once every connection is closed. */
  stop(): Promise<void> {
    this.stopping ??= this.close();
    return this.stopping;
  }

  private async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const res of this.inFlight) {
      if (!res.headersSent) res.shouldKeepAlive = false;
      // An event stream never finishes by itself: it ends now, and its client reconnects elsewhere.
      else if (isLongLivedResponse(res)) res.end();
    }
    server.closeIdleConnections();
    const deadline = this.options.clock.setTimer(this.options.drainMs ?? DEFAULT_DRAIN_MS, () => {
      this.options.logger?.warn({ listener: this.name }, 'drain deadline passed; closing open connections');
      server.closeAllConnections();
    });
    try {
      await closed;
    } finally {
      deadline.cancel();
    }
    this.options.logger?.info({ listener: this.name }, `${this.name} listener stopped`);
  }
}

export function createHttpServer(options: HttpServerOptions): HttpServer {
  return new HttpServer(options);
}
