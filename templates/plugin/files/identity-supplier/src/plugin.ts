import { defineIdentityPlugin } from '@baton/plugin-identity';
import { {{camelName}}Options } from './options.js';
import { {{className}} } from './{{fileName}}.js';

/**
 * An inert value: a host that adds it gets a {{className}} as its IdentitySupplier. It needs
 * the host's Rng (to mint operation identities), which every host's system defaults provide.
 */
export const {{pluginConst}} = defineIdentityPlugin({
  id: '{{pluginId}}',
  description: {{description | ts}},
  options: {{camelName}}Options,
  create: (rng, options) => new {{className}}(rng, options),
});
