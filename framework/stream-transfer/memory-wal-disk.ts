import type { WalDisk } from './disk-wal.js';

/**
 * A WalDisk in process memory, for hosts that choose a memory WAL (tests, benchmarks, a
 * throwaway dev node): the real WAL code, with nothing surviving the process. Appends are kept
 * as chunks, so a long log costs O(bytes added) per append rather than a copy of the whole file.
 */
export class MemoryWalDisk implements WalDisk {
  private readonly files = new Map<string, Uint8Array[]>();

  append(key: string, bytes: Uint8Array): void {
    const chunks = this.files.get(key) ?? [];
    chunks.push(Uint8Array.from(bytes));
    this.files.set(key, chunks);
  }

  write(key: string, bytes: Uint8Array): void {
    this.files.set(key, [Uint8Array.from(bytes)]);
  }

  read(key: string): Uint8Array | undefined {
    const chunks = this.files.get(key);
    if (!chunks) return undefined;
    const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const chunk of chunks) {
      out.set(chunk, at);
      at += chunk.length;
    }
    this.files.set(key, [out]);
    return Uint8Array.from(out);
  }

  sync(): void {}
}
