import test from 'ava';
import { AUDIT_STORE } from '@baton/contracts';
import { createHost, WiringError } from '@baton/kernel';
import { auditStoreSuite } from '@baton/conformance';
import { {{pluginConst}} } from '../src/plugin.js';

// The AuditStore conformance suite, run against the store as a host gets it from the plugin.
// It fails until every method of src/{{fileName}}.ts is implemented.
auditStoreSuite({
  test,
  name: '{{name}}',
  factory: () => {
    const store = createHost().add({{pluginConst}}, {}).build().get(AUDIT_STORE);
    // Give each test an isolated, empty store (a fresh prefix or directory), and return
    // `cleanup` to remove it afterwards. Add makeUnavailable/restore to have outages checked.
    return { store };
  },
});

test('{{name}}: the plugin refuses an unknown option, naming it', (t) => {
  const error = t.throws(() => createHost().add({{pluginConst}}, { noSuchOption: 1 }).build(), {
    instanceOf: WiringError,
  });
  t.regex(error!.message, /{{pluginId}}/);
  t.regex(error!.message, /noSuchOption/);
});
