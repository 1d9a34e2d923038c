import { InvalidArgumentError } from 'commander';
import { OPERATION_ID_PATTERN } from '@baton/contracts';

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

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
type DurationUnit = keyof typeof UNIT_MS;

/**
 * A duration as given on the command line, returned in milliseconds: with a unit (`500ms`,
 * `30s`, `2m`, `1h`, or several like `1m30s`), or a plain number in the flag's documented unit
 * (`bare`: seconds for --timeout, milliseconds for --interval), so what worked before still does.
 */
export function durationMs(bare: DurationUnit, min = 1): (raw: string) => number {
  return (raw) => {
    const text = raw.trim();
    let ms: number;
    if (/^\d+(\.\d+)?$/.test(text)) {
      ms = Number(text) * UNIT_MS[bare];
    } else if (/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(text)) {
      ms = 0;
      for (const part of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) ms += Number(part[1]) * UNIT_MS[part[2] as DurationUnit];
    } else {
      throw new InvalidArgumentError(
        `${JSON.stringify(raw)} is not a duration: give a number of ${bare === 's' ? 'seconds' : 'milliseconds'}, or one with a unit (500ms, 30s, 2m).`,
      );
    }
    ms = Math.round(ms);
    if (ms < min) throw new InvalidArgumentError(`it must be at least ${min} ms, not ${raw.trim()}.`);
    if (!Number.isSafeInteger(ms)) throw new InvalidArgumentError(`${raw.trim()} is too long a duration.`);
    return ms;
  };
}

/** What a duration flag's help says of its input, after its own words. */
export const SECONDS_HELP = 'a plain number is seconds; or with a unit: 500ms, 30s, 2m';
export const MILLISECONDS_HELP = 'a plain number is milliseconds; or with a unit: 500ms, 2s';

/** An Idempotency-Key as every Baton API takes it: refused before anything is sent when it is not one. */
export function idempotencyKeyArgument(raw: string): string {
  if (!OPERATION_ID_PATTERN.test(raw)) throw new InvalidArgumentError(`${JSON.stringify(raw)} is not an idempotency key: use 1 to 128 letters, digits or . _ : ~ -.`);
  return raw;
}

/**
 * A time on the command line: ISO 8601 with seconds and its zone (2026-12-03T22:00:00Z), kept
 * as given. Seconds are required because the nodes' RFC 3339 fields require them.
 */
export function isoTime(raw: string): string {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(raw) || Number.isNaN(Date.parse(raw))) {
    throw new InvalidArgumentError(`${JSON.stringify(raw)} is not an ISO 8601 time with a zone (2026-12-03T22:00:00Z).`);
  }
  return raw;
}

/** A number above 0 (a pace, a rate). */
export function positiveNumber(raw: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value <= 0) throw new InvalidArgumentError(`${JSON.stringify(raw)} is not a positive number.`);
  return value;
}
