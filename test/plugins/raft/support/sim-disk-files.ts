import type { SimDisk } from '@baton/testing/internal/sim/disk.js';
import type { ByteFiles } from '@baton/kernel/internal/byte-files.js';

/** ByteFiles on a SimDisk under a prefix: what the disk has not synced, a crash takes away. */
export class SimDiskFiles implements ByteFiles {
  /** Operations allowed before the next one throws, simulating the process dying mid-write. */
  failAfter = Infinity;

  constructor(
    readonly disk: SimDisk,
    readonly prefix = 'raft/',
  ) {}

  private step(): void {
    if (this.failAfter-- <= 0) throw new Error('simulated crash');
  }

  async list(): Promise<string[]> {
    return this.disk.keys(this.prefix).map((k) => k.slice(this.prefix.length));
  }

  async read(name: string): Promise<Uint8Array | undefined> {
    return this.disk.read(this.prefix + name);
  }

  async append(name: string, bytes: Uint8Array): Promise<void> {
    this.step();
    this.disk.append(this.prefix + name, bytes);
  }

  async sync(name: string): Promise<void> {
    this.step();
    this.disk.sync(this.prefix + name);
  }

  async replace(name: string, bytes: Uint8Array): Promise<void> {
    this.step();
    this.disk.write(this.prefix + name, bytes);
    this.step();
    this.disk.sync(this.prefix + name);
  }

  async truncate(name: string, length: number): Promise<void> {
    this.step();
    const bytes = this.disk.read(this.prefix + name) ?? new Uint8Array(0);
    this.disk.write(this.prefix + name, bytes.slice(0, length));
    this.disk.sync(this.prefix + name);
  }

  async remove(name: string): Promise<void> {
    this.step();
    this.disk.delete(this.prefix + name);
    this.disk.sync(this.prefix + name);
  }

  async close(): Promise<void> {}
}
