import { z } from 'zod';

/** The options of the pino logger plugin: how much it logs, and whether as readable lines. */
export const logOptions = z
  .object({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    pretty: z.boolean().optional(),
  })
  .strict();

/**
 * The `log` section of a host's config file, handed to the pino logger plugin: optional, info
 * and above when left out.
 */
export const hostLogConfig = logOptions.default({ level: 'info' });
