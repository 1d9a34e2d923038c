import type { z } from 'zod';
import { describeInvalidFields, invalidFields } from './invalid-fields.js';
import { HttpProblem } from './problem.js';

/**
 * Parses `value` with `schema`, or raises a 400 problem listing every invalid field (path and
 * message) so the caller can fix them all in one go. `what` names the input in the detail
 * ("request body", "query", "path").
 */
export function validate<S extends z.ZodType>(schema: S, value: unknown, what = 'input'): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const fields = invalidFields(result.error.issues);
  throw new HttpProblem({
    status: 400,
    type: 'invalid-input',
    detail: `invalid ${what}: ${describeInvalidFields(fields)}`,
    extra: { invalid_fields: fields },
    cause: result.error,
  });
}
