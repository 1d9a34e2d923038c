import { z } from 'zod';

/**
 * The options of the {{pluginId}} plugin, validated when a host is built: a wrong or unknown
 * option fails the start with its config path.
 */
export const {{camelName}}Options = z
  .object({
    /** The longest name accepted, in characters. */
    maxLength: z.number().int().min(1).max(1024).default(64),
  })
  .strict();

export type {{className}}Options = z.output<typeof {{camelName}}Options>;
