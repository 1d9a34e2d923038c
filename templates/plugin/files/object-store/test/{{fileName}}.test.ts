import test from 'ava';
import { OBJECT_STORE } from '@baton/contracts';
import { createHost, WiringError } from '@baton/kernel';
import { objectStoreSuite } from '@baton/conformance';
import { {{pluginConst}} } from '../src/plugin.js';

// The ObjectStore conformance suite, run against the store as a host gets it from the plugin.
// It fails until every method of src/{{fileName}}.ts is implemented.
objectStoreSuite({
  test,
  name: '{{name}}',
  supports: { conditionalPut: true },
  factory: () => {
    const store = createHost().add({{pluginConst}}, {}).build().get(OBJECT_STORE);
    // Give each test an isolated, empty store (a fresh prefix, bucket or directory), and return
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
