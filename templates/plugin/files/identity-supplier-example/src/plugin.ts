import { IDENTITY_SUPPLIER } from 'baton/framework/contracts/identity-supplier.js';
import { RNG } from 'baton/framework/contracts/rng.js';
import { definePlugin } from 'baton/framework/kernel/plugin.js';
import { {{camelName}}Options } from './options.js';
import { {{className}} } from './{{fileName}}.js';

/**
 * An inert value: a host that adds it gets a {{className}} as its IdentitySupplier. It needs
 * the host's Rng (to mint operation identities), which every host's system defaults provide.
 */
export const {{pluginConst}} = definePlugin({
  id: '{{pluginId}}',
  description: {{description | ts}},
  provides: [IDENTITY_SUPPLIER],
  requires: [RNG],
  options: {{camelName}}Options,
  register: (ctx) =>
    ctx.provide(IDENTITY_SUPPLIER, {
      useFactory: (resolve) => new {{className}}(resolve(RNG), ctx.options),
    }),
});
