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
