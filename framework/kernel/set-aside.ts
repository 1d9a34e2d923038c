import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { BatonError } from '@baton/contracts';
import type { DurableFiles } from './durable-files.js';
import { errnoCode } from './file-system.js';

/** A repair could not keep a damaged file aside, so it changed nothing. */
export class SetAsideError extends BatonError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('set_aside_failed', message, options);
  }
}

/**
 * `<dir>/damaged-<n>`, for the first n from 1 that names nothing in `dir`: where a repair keeps what it replaces.
 *
 * @internal
 */
export async function asideDirectory(dir: string): Promise<string> {
  const taken = new Set(await readdir(dir));
  let n = 1;
  while (taken.has(`damaged-${n}`)) n++;
  return join(dir, `damaged-${n}`);
}

/**
 * Keeps the files `names` of `dir` under `aside` before a repair replaces or removes them:
 * each gets a second name there (a hard link, durable once `aside` is fsynced), or, where hard
 * links fail, a durable copy. Nothing is ever deleted: what a repair drops stays readable.
 *
 * @internal
 */
export async function setAside(files: DurableFiles, dir: string, names: readonly string[], aside: string): Promise<string[]> {
  await files.createDirectory(aside);
  const kept: string[] = [];
  for (const name of names) {
    const from = join(dir, name);
    const to = join(aside, name);
    try {
      await files.link(from, to);
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'EEXIST') throw new SetAsideError(`${to} exists already: move it away and run the repair again`, { cause: error });
      if (code === 'ENOENT') throw new SetAsideError(`${from} vanished while it was being kept aside: is the node still running?`, { cause: error });
      await files.writeNew(to, await readFile(from));
      await files.syncDirectory(dirname(to));
    }
    kept.push(to);
  }
  return kept;
}
