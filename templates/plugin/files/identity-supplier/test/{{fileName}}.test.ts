import test from 'ava';
import { IDENTITY_SUPPLIER, RNG } from '@baton/contracts';
import { createHost, WiringError } from '@baton/kernel';
import { SeededRng, identitySupplierSuite } from '@baton/conformance';
import { {{pluginConst}} } from '../src/plugin.js';

// The IdentitySupplier conformance suite, run against the supplier as a host gets it from the
// plugin. It fails until src/{{fileName}}.ts is implemented. Replace the example names below
// with names of your ecosystem: the suite checks each list against your rules.
identitySupplierSuite({
  test,
  name: '{{name}}',
  factory: (rng) => createHost().add({{pluginConst}}, {}).value(RNG, rng).build().get(IDENTITY_SUPPLIER),
  // Names your ecosystem accepts, in any spelling it accepts.
  valid: ['example-project', 'Example-Project'],
  // Inputs it refuses, each with a pattern the error's reason must match.
  invalid: [{ input: '', why: /empty/ }],
  // Pairs of spellings of one authority.
  equivalent: [['example-project', 'Example-Project']],
});

test('{{name}}: the plugin refuses an unknown option, naming it', (t) => {
  const error = t.throws(
    () => createHost().add({{pluginConst}}, { noSuchOption: 1 }).value(RNG, new SeededRng(1)).build(),
    { instanceOf: WiringError },
  );
  t.regex(error!.message, /{{pluginId}}/);
  t.regex(error!.message, /noSuchOption/);
});
