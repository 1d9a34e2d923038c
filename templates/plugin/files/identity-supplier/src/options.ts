import { z } from 'zod';

/**
 * The options of the {{pluginId}} plugin, validated when a host is built: a wrong or unknown
 * option fails the start with its config path. Add what your ecosystem's rules need.
 */
export const {{camelName}}Options = z
  .object({
    /** An example option: the longest name accepted. Remove or replace it. */
    maxLength: z.number().int().min(1).default(214),
  })
  .strict();

export type {{className}}Options = z.output<typeof {{camelName}}Options>;
