import { OBJECT_STORE } from '@baton/contracts';
import { definePlugin } from '@baton/kernel';
import { {{camelName}}Options } from './options.js';
import { {{className}} } from './{{fileName}}.js';

/** An inert value: a host that adds it gets a {{className}} as its ObjectStore. */
export const {{pluginConst}} = definePlugin({
  id: '{{pluginId}}',
  description: {{description | ts}},
  provides: [OBJECT_STORE],
  options: {{camelName}}Options,
  register: (ctx) => ctx.provide(OBJECT_STORE, { useFactory: () => new {{className}}(ctx.options) }),
});
