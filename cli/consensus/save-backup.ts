import { createHash } from 'node:crypto';
import { dirname } from 'node:path';
import { backupHeaderSchema, type BackupHeader } from '@baton/cluster';
import { durableFiles } from '@baton/kernel';
import { FailedError } from '../cli-errors.js';

/**
 * Streams a backup's bytes to `file` (created 0600 under a temporary name beside it) while
 * checking them: the header must be a backup header, and the bytes after it must hash to its
 * sha256 and hold its piece count. Only a backup that checks is renamed to `file`, so `file` is
 * never half written or wrong; the temporary file is removed otherwise.
 */
export async function saveBackup(file: string, body: AsyncIterable<Uint8Array>, source: string): Promise<{ header: BackupHeader; bytes: number }> {
  await durableFiles.createDirectory(dirname(file), { parents: true });
  const temp = `${file}.partial-${process.pid}`;
  await durableFiles.writeNew(temp, new Uint8Array(0), { permissions: 0o600 });
  const hash = createHash('sha256');
  let headerBytes: Buffer[] = [];
  let header: BackupHeader | undefined;
  let bytes = 0;
  let lines = 0;
  let lastByte = 0x0a;
  const out = await durableFiles.openAppend(temp);
  try {
    try {
      for await (const chunk of body) {
        let rest = Buffer.from(chunk);
        bytes += rest.length;
        if (!header) {
          const newline = rest.indexOf(0x0a);
          if (newline < 0) {
            headerBytes.push(rest);
            if (headerBytes.reduce((n, b) => n + b.length, 0) > 1 << 20) throw invalid(source, 'no header line in the first MiB');
            await out.append(rest);
            continue;
          }
          headerBytes.push(rest.subarray(0, newline));
          header = parseHeader(Buffer.concat(headerBytes), source);
          headerBytes = [];
          await out.append(rest.subarray(0, newline + 1));
          rest = rest.subarray(newline + 1);
        }
        if (rest.length === 0) continue;
        hash.update(rest);
        for (let at = rest.indexOf(0x0a); at >= 0; at = rest.indexOf(0x0a, at + 1)) lines++;
        lastByte = rest[rest.length - 1];
        await out.append(rest);
      }
      await out.sync();
    } finally {
      await out.close();
    }
    if (!header) throw invalid(source, 'the answer ended before its header line');
    const sha256 = hash.digest('hex');
    if (sha256 !== header.sha256) throw invalid(source, `checksum mismatch: the header says sha256 ${header.sha256}, the content hashes to ${sha256} (the answer was cut short or damaged)`);
    const pieces = lines + (lastByte === 0x0a ? 0 : 1);
    if (pieces !== header.pieces) throw invalid(source, `the header announces ${header.pieces} pieces, the answer held ${pieces}`);
    await durableFiles.rename(temp, file);
  } catch (error) {
    await durableFiles.discard(temp).catch(() => undefined);
    throw error;
  }
  return { header, bytes };
}

function parseHeader(line: Buffer, source: string): BackupHeader {
  let raw: unknown;
  try {
    raw = JSON.parse(line.toString('utf8'));
  } catch {
    throw invalid(source, 'the first line is not JSON: not a Baton metadata backup');
  }
  const parsed = backupHeaderSchema.safeParse(raw);
  if (!parsed.success) throw invalid(source, `the first line is not a backup header: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'header'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

function invalid(source: string, why: string): FailedError {
  return new FailedError('invalid_backup', `${source} sent a backup that does not check: ${why}`);
}
