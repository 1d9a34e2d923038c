import { InvalidIdentityError } from '@baton/contracts';

/**
 * Identities arrive from HTTP headers, JSON bodies and configuration, so a caller may hand over
 * something that is not a string at all. That is the caller's mistake, reported like any other
 * invalid identity rather than as a TypeError from deep inside a validator.
 */
export function requireString(kind: 'authority' | 'operation', raw: unknown): string {
  if (typeof raw === 'string') return raw;
  throw new InvalidIdentityError(kind, String(raw), `must be a string, got ${describeType(raw)}`);
}

export function invalidAuthority(input: string, reason: string): InvalidIdentityError {
  return new InvalidIdentityError('authority', input, reason);
}

/**
 * Names one character so a reader can see it even when it is invisible or a look-alike:
 * `"!"` for printable ASCII, `U+00E9 "é"` otherwise, `U+0007` for controls.
 */
export function describeChar(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  if (code >= 0x21 && code <= 0x7e) return JSON.stringify(char);
  if (code === 0x20) return `${hex} (space)`;
  if (/[\p{Cc}\p{Cs}\p{Cf}\p{Z}]/u.test(char)) return hex;
  return `${hex} ${JSON.stringify(char)}`;
}

/** The first character of `text` (by code point) that `allowed` rejects, with its position. */
export function firstCharOutside(
  text: string,
  allowed: RegExp,
): { char: string; index: number } | undefined {
  let index = 0;
  for (const char of text) {
    if (!allowed.test(char)) return { char, index };
    index += char.length;
  }
  return undefined;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}
