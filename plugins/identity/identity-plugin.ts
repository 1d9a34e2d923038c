import type { z } from 'zod';
import { IDENTITY_SUPPLIER, type IdentitySupplier, RNG, type Rng } from '@baton/contracts';
import { definePlugin } from '@baton/kernel';

export interface IdentityPluginDefinition<Schema extends z.ZodType> {
  id: string;
  description: string;
  options: Schema;
  /** The supplier, given the host's Rng (operation identities are minted from it). */
  create: (rng: Rng, options: z.output<Schema>) => IdentitySupplier;
}

/**
 * An ecosystem's IdentitySupplier as a plugin: it provides IDENTITY_SUPPLIER and requires only
 * the host's Rng, which every host's system defaults provide.
 */
export function defineIdentityPlugin<Schema extends z.ZodType>(
  definition: IdentityPluginDefinition<Schema>,
) {
  return definePlugin({
    id: definition.id,
    description: definition.description,
    provides: [IDENTITY_SUPPLIER],
    requires: [RNG],
    options: definition.options,
    register: (ctx) =>
      ctx.provide(IDENTITY_SUPPLIER, {
        useFactory: (resolve) => definition.create(resolve(RNG), ctx.options),
      }),
  });
}
