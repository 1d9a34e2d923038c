import { InvalidKeyError } from '@baton/contracts';
import { decodeName, encodeName } from './file-name-encoding.js';

/**
 * How an object key maps to a file under the store's `objects/` directory: the key is split at
 * `/`; every segment but the last becomes a directory `<encoded>.d`, the last a file
 * `<encoded>.o`. The suffixes keep a key and the keys below it apart (`a` is `a.o`, `a/b` is
 * `a.d/b.o`), and since encoded text never holds a `.`, no name can pose as another kind.
 * Nested directories let a prefix listing read only the part of the tree it needs.
 */
export const DIRECTORY_SUFFIX = '.d';
export const OBJECT_SUFFIX = '.o';

/** Linux NAME_MAX is 255 bytes; encoded names are ASCII, so bytes = characters. */
const MAX_NAME = 255;
/** Leaves room under PATH_MAX (4096) for the store's own directory. */
const MAX_RELATIVE_PATH = 3072;

/** The path of a key's file relative to `objects/`, as segments, or InvalidKeyError. */
export function objectPathSegments(key: string): string[] {
  if (typeof key !== 'string' || key.length === 0) {
    throw new InvalidKeyError(String(key), 'a key must be a non-empty string');
  }
  if (key.includes('\0')) {
    throw new InvalidKeyError(key, 'it contains a NUL character; remove it');
  }
  if (key.startsWith('/')) {
    throw new InvalidKeyError(key, 'it is an absolute path; keys are relative, drop the leading "/"');
  }
  const segments = key.split('/');
  if (segments.some((s) => s === '.' || s === '..')) {
    throw new InvalidKeyError(key, 'a "." or ".." segment could escape the store root; remove it');
  }
  const names = segments.map((segment, i) =>
    encodeName(segment) + (i === segments.length - 1 ? OBJECT_SUFFIX : DIRECTORY_SUFFIX),
  );
  const tooLong = names.findIndex((name) => name.length > MAX_NAME);
  if (tooLong >= 0) {
    throw new InvalidKeyError(
      key,
      `segment ${tooLong + 1} encodes to ${names[tooLong].length} bytes, more than a file name holds (${MAX_NAME}); split it with "/"`,
    );
  }
  const length = names.reduce((sum, name) => sum + name.length + 1, 0);
  if (length > MAX_RELATIVE_PATH) {
    throw new InvalidKeyError(key, `it encodes to a ${length}-byte path, more than ${MAX_RELATIVE_PATH}; use a shorter key`);
  }
  return names;
}

/** A directory entry of the object tree, decoded; undefined for names the store did not write. */
export type TreeEntry = { kind: 'object' | 'directory'; segment: string };

export function parseTreeEntry(name: string): TreeEntry | undefined {
  const kind = name.endsWith(OBJECT_SUFFIX) ? 'object' : name.endsWith(DIRECTORY_SUFFIX) ? 'directory' : undefined;
  if (!kind) return undefined;
  const segment = decodeName(name.slice(0, -2));
  return segment === undefined ? undefined : { kind, segment };
}
