import { readFileSync, statSync } from 'node:fs';
import type { Logger } from '@baton/contracts';
import { ConfigError } from './wiring-error.js';

/**
 * Whether a file that holds secrets can be read by its group or by others. Only meaningful on
 * POSIX permissions: undefined when the file cannot be looked at.
 */
export function readableByOthers(path: string): boolean | undefined {
  try {
    return (statSync(path).mode & 0o077) !== 0;
  } catch {
    return undefined;
  }
}

/** Logs a warning when a file holding tokens, secrets or keys is readable beyond its owner. */
export function warnIfReadableByOthers(path: string, what: string, logger: Logger): void {
  if (readableByOthers(path)) {
    logger.warn({ file: path }, `${what} ${path} is readable by group or others: it holds secrets, run chmod 600 on it`);
  }
}

/** The secret in the first line of `path`, warning when the file is readable beyond its owner. */
export function readSecretFile(path: string, what: string, logger: Logger): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`${what}: cannot read ${path}: ${(error as Error).message}`);
  }
  warnIfReadableByOthers(path, what, logger);
  const secret = text.split(/\r?\n/, 1)[0]?.trim() ?? '';
  if (secret === '') throw new ConfigError(`${what}: ${path} is empty: put the secret on its first line`);
  return secret;
}
