import { lstat, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { FailedError } from '../cli-errors.js';
import type { GeneratedFile } from './template-files.js';

/**
 * Writes a generated project into `dir` without ever replacing a file: every target is checked
 * first and the command refuses, listing them all, if any exists; then each file is created
 * exclusively, so a file that appears in between is not overwritten either.
 */
export async function writeProject(
  dir: string,
  files: readonly GeneratedFile[],
): Promise<string[]> {
  const existing: string[] = [];
  for (const file of files) {
    if (await exists(join(dir, file.path))) existing.push(file.path);
  }
  if (existing.length > 0) {
    throw new FailedError(
      'file_exists',
      `refusing to overwrite ${existing.length} existing file(s) in ${dir}: ${existing.join(', ')}. ` +
        'Choose another directory with --dir, or move them away.',
    );
  }
  const written: string[] = [];
  for (const file of files) {
    const target = join(dir, file.path);
    await mkdir(dirname(target), { recursive: true });
    try {
      await writeFile(target, file.content, { flag: 'wx', mode: file.private ? 0o600 : 0o666 });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const done = written.length > 0 ? ` (already written: ${written.join(', ')})` : '';
      if (code === 'EEXIST') {
        throw new FailedError(
          'file_exists',
          `refusing to overwrite ${relative(dir, target)}, which appeared meanwhile${done}`,
        );
      }
      throw new FailedError(
        'write_failed',
        `cannot write ${target}: ${(error as Error).message}${done}`,
        { cause: error },
      );
    }
    written.push(file.path);
  }
  return written;
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    // A file where a directory of the path should be: writing there is impossible, so it conflicts.
    if (code === 'ENOTDIR') return true;
    throw error;
  }
}
