import { z } from 'zod';

/** Decimal digits only, with an optional sign: what a person types for a count or an offset. */
const DECIMAL = /^-?[0-9]{1,15}$/;

/**
 * A number carried in a query string, written in decimal digits. `z.coerce.number()` would also
 * read "1e3" as 1000, "0x10" as 16, " 7" as 7 and "" as 0; those are refused here, naming the
 * parameter. `schema` bounds the number itself (integer, range); put `.default()` on the result.
 */
export function decimalQuery<T extends z.ZodType<number>>(name: string, schema: (n: z.ZodNumber) => T) {
  return z.preprocess(
    (value) => (typeof value === 'string' && DECIMAL.test(value) ? Number(value) : value),
    schema(z.number({ error: `${name} must be a whole number in decimal digits` })),
  );
}
