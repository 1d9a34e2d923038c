import { InvalidArgumentError } from 'commander';

/**
 * Parsers for numeric flags. Commander reports what they throw as a usage error (exit 2) naming
 * the option, so `--limit ten` fails before any request is sent.
 */
export function integerAtLeast(min: number, max = Number.MAX_SAFE_INTEGER): (raw: string) => number {
  return (raw) => {
    if (!/^-?\d+$/.test(raw.trim())) throw new InvalidArgumentError(`${JSON.stringify(raw)} is not a whole number.`);
    const value = Number(raw);
    if (value < min) throw new InvalidArgumentError(`it must be at least ${min}, not ${raw.trim()}.`);
    // Digits too many for an exact number are a number too large, not "not a number".
    if (!Number.isSafeInteger(value) || value > max) throw new InvalidArgumentError(`it must be at most ${max}, not ${raw.trim()}.`);
    return value;
  };
}

/** Seconds as given on the command line, returned in milliseconds. */
export function secondsAsMs(raw: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidArgumentError(`${JSON.stringify(raw)} is not a positive number of seconds.`);
  }
  return Math.round(value * 1000);
}
