import { AUDIT_STORE } from '@baton/contracts';
import { definePlugin } from '@baton/kernel';
import { {{camelName}}Options } from './options.js';
import { {{className}} } from './{{fileName}}.js';

/** An inert value: a host that adds it gets a {{className}} as its AuditStore. */
export const {{pluginConst}} = definePlugin({
  id: '{{pluginId}}',
  description: {{description | ts}},
  provides: [AUDIT_STORE],
  options: {{camelName}}Options,
  register: (ctx) => ctx.provide(AUDIT_STORE, { useFactory: () => new {{className}}(ctx.options) }),
});
