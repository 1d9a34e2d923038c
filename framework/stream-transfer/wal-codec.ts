import { crc32 } from 'node:zlib';
import type { WalEntry } from './wal.js';

/**
 * One WAL entry per line: `crc32-hex SPACE json NEWLINE`. The checksum finds a torn tail left
 * by a crash mid-append; everything from the first bad line on is ignored, because appends only
 * ever tear at the end.
 */
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeEntries(entries: readonly WalEntry[]): Uint8Array {
  let text = '';
  for (const entry of entries) {
    const json = JSON.stringify(entry);
    text += `${crc32(json).toString(16).padStart(8, '0')} ${json}\n`;
  }
  return encoder.encode(text);
}

export function decodeEntries(bytes: Uint8Array): { entries: WalEntry[]; validBytes: number } {
  const text = decoder.decode(bytes);
  const entries: WalEntry[] = [];
  let position = 0;
  let validChars = 0;
  while (position < text.length) {
    const end = text.indexOf('\n', position);
    if (end < 0) break;
    const line = text.slice(position, end);
    const space = line.indexOf(' ');
    const json = space === 8 ? line.slice(9) : undefined;
    if (json === undefined || crc32(json).toString(16).padStart(8, '0') !== line.slice(0, 8)) break;
    try {
      entries.push(JSON.parse(json) as WalEntry);
    } catch {
      break;
    }
    position = end + 1;
    validChars = position;
  }
  return { entries, validBytes: encoder.encode(text.slice(0, validChars)).length };
}
