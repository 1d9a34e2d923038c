import { z } from 'zod';

/**
 * The options of the {{pluginId}} plugin, validated when a host is built: a wrong or unknown
 * option fails the start with its config path. Add what your backend needs (an address, a
 * bucket, credentials...).
 */
export const {{camelName}}Options = z
  .object({
    /** An example option: remove or replace it. */
    prefix: z.string().default(''),
  })
  .strict();

export type {{className}}Options = z.output<typeof {{camelName}}Options>;
