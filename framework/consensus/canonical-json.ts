/**
 * JSON with object keys sorted at every depth, so two commands that are equal as values get the
 * same text whatever order their keys were written in. Used as the fingerprint that tells "the
 * same command retried" from "a different command under a reused idempotency key".
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const source = value as Record<string, unknown>;
    // No prototype: an own "__proto__" member (JSON.parse makes one) is kept as a member, where
    // on a plain object the assignment would set the prototype and the member would vanish, so
    // {"x":1,"__proto__":{"a":1}} fingerprinted as {"x":1}.
    const sorted: Record<string, unknown> = Object.create(null);
    for (const key of Object.keys(source).sort()) {
      // Mirror JSON.stringify: undefined members are absent, not null.
      if (source[key] !== undefined) sorted[key] = sortKeys(source[key]);
    }
    return sorted;
  }
  return value;
}

/**
 * The member of a command that carries what its proposing member observed when it proposed (its
 * clock, what its change feeds showed): sealed into the command's audit record, but no part of
 * what the caller asked. A retry through another member observes otherwise and is still the
 * same request.
 */
export const OBSERVED_MEMBER = 'observed';

/**
 * The fingerprint that tells "the same command retried" from "a different command under a
 * reused idempotency key": the command's canonical JSON without its top-level `observed` member.
 * A retry then replays the first decision, whose record keeps the first attempt's observations.
 */
export function commandFingerprint(command: unknown): string {
  if (command === null || typeof command !== 'object' || Array.isArray(command) || !Object.hasOwn(command, OBSERVED_MEMBER)) {
    return canonicalJson(command);
  }
  const { [OBSERVED_MEMBER]: _observed, ...asked } = command as Record<string, unknown>;
  return canonicalJson(asked);
}
