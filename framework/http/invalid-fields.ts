import type { z } from 'zod';
import { HttpProblem } from './problem.js';

/** One invalid input field, as listed in a 400 problem's `invalid_fields` member. */
export interface InvalidField {
  /** Dotted path inside the validated value (`records.0.body`); empty for the value itself. */
  path: string;
  message: string;
}

export function invalidFields(issues: readonly z.core.$ZodIssue[]): InvalidField[] {
  return issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
}

/** "records.0.body: Invalid input; target: Required" — for the human-readable detail. */
export function describeInvalidFields(fields: readonly InvalidField[]): string {
  return fields.map((f) => (f.path ? `${f.path}: ${f.message}` : f.message)).join('; ');
}

/**
 * A 400 for one field of a body that passed its schema but not a rule the schema cannot say
 * (two fields that go together, a time already past), shaped like a schema refusal.
 */
export function invalidBodyField(field: string, message: string): HttpProblem {
  return new HttpProblem({ status: 400, type: 'invalid-input', detail: `invalid request body: ${field}: ${message}`, extra: { invalid_fields: [{ path: field, message }] } });
}
