import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** The part of s3rver's API used here (the package ships no types). */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: Server;
  store: unknown;
  context: { store: unknown };
  /** Koa's middleware list: extra behaviour goes in front of s3rver's own. */
  middleware: Middleware[];
}

/** The part of a Koa context the middlewares below use. */
interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  get(header: string): string;
  status: number;
  type: string;
  body: unknown;
}
type Middleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>;

export interface S3ServerOptions {
  /**
   * Honour `If-None-Match: *` on PUT, atomically, as AWS S3 and MinIO do (s3rver ignores it), so
   * the create-only path of a client can be tested. Off by default: plain s3rver.
   */
  conditionalPut?: boolean;
  /** Serve https with this PEM certificate and key. */
  tls?: { certFile: string; keyFile: string };
}

/** A failure the server answers instead of (or after) handling a request. */
export interface InjectedFault {
  /** The HTTP status to answer, e.g. 500 or 503. */
  status: number;
  /** Handle the request first (the change happens), then answer the failure: a lost answer. */
  afterHandling?: boolean;
  /** Only requests with this method (default: any). */
  method?: string;
}

interface S3rverObject {
  bucket: string;
  key: string;
  content: Buffer | Readable;
  metadata: Record<string, string>;
}

/** The part of s3rver's FilesystemStore that the fixed store below builds on. */
interface FilesystemStoreBase {
  getMetadata(bucket: string, key: string): Promise<unknown>;
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(
    bucket: string,
    key: string,
    metadata: Record<string, string>,
    md5: string,
  ): Promise<void>;
  putObject(object: S3rverObject): Promise<{ size: number; md5: string }>;
  deleteObject(bucket: string, key: string): Promise<void>;
}
type FilesystemStoreConstructor = new (directory: string) => FilesystemStoreBase;
type S3rverConstructor = new (options: {
  key?: Buffer;
  cert?: Buffer;
  address: string;
  port: number;
  directory: string;
  silent: boolean;
  resetOnClose: boolean;
  allowMismatchedSignatures: boolean;
}) => S3rverInstance;

const requireCjs = createRequire(import.meta.url);
const S3rver = requireCjs('s3rver') as S3rverConstructor;
const FilesystemStore = requireCjs('s3rver/lib/stores/filesystem.js') as FilesystemStoreConstructor;

/**
 * s3rver's file store, with its defects fixed so the server behaves as S3 does. Its put answered
 * before the bytes were written (a get right after could read a short file), wrote in place (an
 * upload cut short left a torn object) and left write errors unhandled; and a delete removes directories left empty, which races a put into the same
 * directory (the put's file vanishes with it, crashing the process). Puts here finish writing
 * before answering, and deletes wait for running puts and hold new ones off (a shared/exclusive
 * lock), so no directory disappears under a write.
 */
class ConsistentFilesystemStore extends FilesystemStore {
  private readonly lock = new SharedExclusiveLock();

  override async putObject(object: S3rverObject): Promise<{ size: number; md5: string }> {
    return this.lock.shared(async () => {
      const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
      await mkdir(dirname(objectPath), { recursive: true });
      const md5 = createHash('md5');
      let size = 0;
      const source = Buffer.isBuffer(object.content)
        ? Readable.from([object.content])
        : object.content;
      const measure = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          md5.update(chunk);
          size += chunk.length;
          callback(null, chunk);
        },
      });
      // Written aside, then renamed: a reader sees the old object or the whole new one, never
      // a torn upload (S3 puts are atomic; s3rver wrote in place).
      const partial = `${objectPath}.${randomBytes(6).toString('hex')}.uploading`;
      try {
        await pipeline(source, measure, createWriteStream(partial));
        await rename(partial, objectPath);
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
      const digest = md5.digest('hex');
      await this.putMetadata(object.bucket, object.key, object.metadata, digest);
      return { size, md5: digest };
    });
  }

  override async deleteObject(bucket: string, key: string): Promise<void> {
    return this.lock.exclusive(() => super.deleteObject(bucket, key));
  }
}

/** Many shared holders at once, or one exclusive holder; waiters are served in arrival order. */
class SharedExclusiveLock {
  private sharedHolders = 0;
  private exclusiveHeld = false;
  private readonly waiters: { exclusive: boolean; wake: () => void }[] = [];

  shared<T>(work: () => Promise<T>): Promise<T> {
    return this.hold(false, work);
  }

  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.hold(true, work);
  }

  private async hold<T>(exclusive: boolean, work: () => Promise<T>): Promise<T> {
    if (this.waiters.length === 0 && this.canEnter(exclusive)) this.enter(exclusive);
    // Otherwise admit() enters on our behalf before waking us.
    else await new Promise<void>((wake) => this.waiters.push({ exclusive, wake }));
    try {
      return await work();
    } finally {
      if (exclusive) this.exclusiveHeld = false;
      else this.sharedHolders--;
      this.admit();
    }
  }

  private canEnter(exclusive: boolean): boolean {
    return !this.exclusiveHeld && (!exclusive || this.sharedHolders === 0);
  }

  private enter(exclusive: boolean): void {
    if (exclusive) this.exclusiveHeld = true;
    else this.sharedHolders++;
  }

  private admit(): void {
    while (this.waiters.length > 0 && this.canEnter(this.waiters[0].exclusive)) {
      const next = this.waiters.shift()!;
      this.enter(next.exclusive);
      next.wake();
    }
  }
}

const HOST = '127.0.0.1';

/** s3rver accepts any credentials; these are what clients in tests sign with. */
export const S3_TEST_CREDENTIALS = { accessKey: 'S3RVER', secretKey: 'S3RVER' } as const;

/**
 * A real S3 HTTP API for tests: s3rver, in this process, on a free loopback port, keeping its
 * objects in its own temporary directory. `stop` drops every connection at once (what a crashed
 * or partitioned server looks like to a client); `restart` serves the same data on the same port.
 */
export class S3Server {
  private instance?: S3rverInstance;
  private port = 0;
  private readonly faults: InjectedFault[] = [];
  private readonly keyLocks = new Map<string, Promise<void>>();
  /** Requests received, by method (faulted ones included), for tests that count retries. */
  readonly requests = new Map<string, number>();

  private constructor(
    readonly dir: string,
    private readonly options: S3ServerOptions,
  ) {}

  static async start(options: S3ServerOptions = {}): Promise<S3Server> {
    const server = new S3Server(await mkdtemp(join(tmpdir(), 'baton-s3rver-')), options);
    try {
      await server.listen();
    } catch (error) {
      await rm(server.dir, { recursive: true, force: true });
      throw error;
    }
    return server;
  }

  get endpoint(): string {
    return `${this.options.tls ? 'https' : 'http'}://${HOST}:${this.port}`;
  }

  get running(): boolean {
    return this.instance !== undefined;
  }

  /** The next `count` matching requests get `fault` instead of (or after) their answer. */
  failNext(count: number, fault: InjectedFault): void {
    for (let i = 0; i < count; i++) this.faults.push(fault);
  }

  /** Stops serving and cuts every open connection (in-flight requests fail). Idempotent. */
  async stop(): Promise<void> {
    const instance = this.instance;
    if (!instance) return;
    this.instance = undefined;
    const closed = instance.close();
    instance.httpServer?.closeAllConnections();
    await closed;
  }

  /** Serves again on the same port, with the objects it held. */
  async restart(): Promise<void> {
    await this.stop();
    await this.listen();
  }

  /** Stops and removes the data directory. */
  async close(): Promise<void> {
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }

  private async listen(): Promise<void> {
    if (this.instance) throw new Error(`s3rver on port ${this.port} is already running`);
    const tls = this.options.tls;
    const instance = new S3rver({
      ...(tls ? { key: await readFile(tls.keyFile), cert: await readFile(tls.certFile) } : {}),
      address: HOST,
      port: this.port, // 0 the first time: the OS picks a free port, which restarts reuse
      directory: this.dir,
      silent: true,
      resetOnClose: false,
      allowMismatchedSignatures: false,
    });
    const store = new ConsistentFilesystemStore(this.dir);
    instance.store = instance.context.store = store;
    const front: Middleware[] = [this.countRequests, this.injectFaults];
    if (this.options.conditionalPut) front.push(this.conditionalPut(store));
    instance.middleware.unshift(...front);
    const address = await instance.run();
    this.port = address.port;
    this.instance = instance;
  }

  private readonly countRequests: Middleware = async (ctx, next) => {
    this.requests.set(ctx.method, (this.requests.get(ctx.method) ?? 0) + 1);
    await next();
  };

  private readonly injectFaults: Middleware = async (ctx, next) => {
    const index = this.faults.findIndex((f) => f.method === undefined || f.method === ctx.method);
    if (index < 0) return next();
    const [fault] = this.faults.splice(index, 1);
    if (fault.afterHandling) await next();
    ctx.status = fault.status;
    ctx.type = 'application/xml';
    ctx.body = errorXml('InternalError', `fault injected by the test (HTTP ${fault.status})`);
  };

  /** If-None-Match: * on a PUT of an object, checked and applied under a per-key lock. */
  private conditionalPut(store: FilesystemStoreBase): Middleware {
    return async (ctx, next) => {
      const createOnly = ctx.method === 'PUT' && ctx.get('if-none-match') === '*';
      if (!createOnly || ctx.query.uploadId !== undefined || ctx.query.partNumber !== undefined)
        return next();
      const [bucket, ...rest] = ctx.path.slice(1).split('/');
      const key = rest.map(decodeURIComponent).join('/');
      await this.underKeyLock(`${bucket}/${key}`, async () => {
        const exists = await store.getMetadata(bucket, key).then(
          () => true,
          (error: NodeJS.ErrnoException) => {
            if (error.code === 'ENOENT') return false;
            throw error;
          },
        );
        if (!exists) return next();
        ctx.status = 412;
        ctx.type = 'application/xml';
        ctx.body = errorXml(
          'PreconditionFailed',
          'At least one of the pre-conditions you specified did not hold',
        );
      });
    };
  }

  private async underKeyLock(key: string, work: () => Promise<void>): Promise<void> {
    const previous = this.keyLocks.get(key) ?? Promise.resolve();
    const current = previous.then(work, work);
    const settled = current.catch(() => undefined);
    this.keyLocks.set(key, settled);
    try {
      await current;
    } finally {
      if (this.keyLocks.get(key) === settled) this.keyLocks.delete(key);
    }
  }
}

function errorXml(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
}
