/** The page size of a list call: the contract's default, or the caller's positive integer. */
export function listLimit(limit: number | undefined, fallback: number, what: string): number {
  if (limit === undefined) return fallback;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`${what}: limit must be a positive integer, got ${String(limit)}`);
  }
  return limit;
}
