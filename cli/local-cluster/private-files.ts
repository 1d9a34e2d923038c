import { dirname } from 'node:path';
import { durableFiles } from '@baton/kernel';

/** Creates `dir` (and its parents) readable by its owner only; an existing one is narrowed to 0700. */
export async function privateDirectory(dir: string): Promise<void> {
  await durableFiles.createDirectory(dir, { parents: true, permissions: 0o700 });
}

/**
 * Writes a file that holds tokens or secrets: created 0600 under a temporary name, fsynced and
 * renamed over the old one, so neither a reader nor an interrupted write (nor a power cut) ever
 * sees it wider or half written.
 */
export async function writePrivateFile(file: string, content: string): Promise<void> {
  await privateDirectory(dirname(file));
  await durableFiles.replace(file, new TextEncoder().encode(content), { permissions: 0o600 });
}
