import type { WalDisk } from './disk-wal.js';

/**
 * A WalDisk in process memory, for hosts that choose a memory WAL (tests, benchmarks, a
 * throwaway dev node): the real WAL code, with nothing surviving the process.
 */
export class MemoryWalDisk implements WalDisk {
  private readonly files = new Map<string, Uint8Array>();

  append(key: string, bytes: Uint8Array): void {
    const current = this.files.get(key) ?? new Uint8Array(0);
    const joined = new Uint8Array(current.length + bytes.length);
    joined.set(current);
    joined.set(bytes, current.length);
    this.files.set(key, joined);
  }

  write(key: string, bytes: Uint8Array): void {
    this.files.set(key, Uint8Array.from(bytes));
  }

  read(key: string): Uint8Array | undefined {
    const bytes = this.files.get(key);
    return bytes && Uint8Array.from(bytes);
  }

  sync(): void {}
}
