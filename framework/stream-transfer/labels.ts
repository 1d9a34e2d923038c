import { z } from 'zod';

/**
 * Node labels (`{"zone": "z1", "rack": "r3"}`) and stream placements, as the API and the log
 * carry them. Bounded like every input: a few short labels per node, a few per placement.
 */
export type Labels = Record<string, string>;

/** Where a stream may live and where it would rather live (placement-rules.ts decides). */
export interface StreamPlacement {
  /** Every one of these labels, with this value, on the owner. */
  require?: Labels;
  /** Owners with more of these are chosen first, when the requirement and the spread allow. */
  prefer?: Labels;
  /** Streams of one group spread evenly over the values of one label (a lost zone takes its share only). */
  spread?: { group: string; by: string };
}

export const MAX_LABELS = 16;
const LABEL_KEY = /^[a-z0-9]([a-z0-9._/-]{0,61}[a-z0-9])?$/;
const LABEL_VALUE = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;

export const labelKeySchema = z
  .string()
  .regex(LABEL_KEY, 'a label name is 1-63 lowercase letters, digits, ".", "_", "/" or "-", starting and ending with a letter or digit');
const labelValueSchema = z
  .string()
  .regex(LABEL_VALUE, 'a label value is 1-63 letters, digits, ".", "_" or "-", starting and ending with a letter or digit');

export const labelsSchema = z
  .record(labelKeySchema, labelValueSchema)
  .refine((labels) => Object.keys(labels).length <= MAX_LABELS, { message: `at most ${MAX_LABELS} labels` });

export const placementSchema = z
  .object({
    require: labelsSchema.optional().describe('Labels the owner must carry, with these values'),
    prefer: labelsSchema.optional().describe('Labels an owner is preferred for, when the requirement and the spread allow'),
    spread: z
      .object({
        group: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'a spread group is 1-128 letters, digits, ".", "_" or "-"'),
        by: labelKeySchema.describe('The label whose values the group spreads over (e.g. zone)'),
      })
      .strict()
      .optional()
      .describe('Streams of one group spread evenly over the values of one label'),
  })
  .strict();

/** A label's value, only if the node really carries it (never an inherited property such as `constructor`). */
export function labelOf(labels: Labels | undefined, key: string): string | undefined {
  return labels && Object.hasOwn(labels, key) ? labels[key] : undefined;
}

export function sameLabels(a: Labels | undefined, b: Labels | undefined): boolean {
  const left = Object.entries(a ?? {});
  if (left.length !== Object.keys(b ?? {}).length) return false;
  return left.every(([key, value]) => labelOf(b, key) === value);
}
