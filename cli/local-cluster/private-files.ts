import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Creates `dir` (and its parents) readable by its owner only; an existing one is narrowed to 0700. */
export async function privateDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
}

/**
 * Writes a file that holds tokens or secrets: created 0600 under a temporary name and renamed
 * over the old one, so neither a reader nor an interrupted write ever sees it wider or half written.
 */
export async function writePrivateFile(file: string, content: string): Promise<void> {
  await privateDirectory(dirname(file));
  const temporary = `${file}.tmp`;
  await writeFile(temporary, content, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, file);
}
