import test from 'ava';
import { IDENTITY_SUPPLIER, InvalidIdentityError, RNG, type Rng } from '@baton/contracts';
import { createHost, WiringError } from '@baton/kernel';
import { SeededRng, identitySupplierSuite } from '@baton/conformance';
import { {{pluginConst}} } from '../src/plugin.js';

const supplier = (options: unknown = {}, rng: Rng = new SeededRng(1)) =>
  createHost().add({{pluginConst}}, options).value(RNG, rng).build().get(IDENTITY_SUPPLIER);

// The IdentitySupplier conformance suite, run against the supplier as a host gets it from the
// plugin. When you change the rules, change these lists with them.
identitySupplierSuite({
  test,
  name: '{{name}}',
  factory: (rng) => supplier({}, rng),
  valid: ['my-project', 'My-Project', 'a', '0day', 'x'.repeat(64)],
  invalid: [
    { input: '', why: /empty/ },
    { input: '-leading-dash', why: /start with a letter or a digit/ },
    { input: 'two words', why: /U\+0020 " " at position 3/ },
    { input: 'under_score', why: /"_" at position 5/ },
    { input: 'café', why: /U\+00E9/ },
    { input: 'x'.repeat(65), why: /65 characters.*limit is 64/ },
  ],
  equivalent: [
    ['My-Project', 'my-project'],
    ['ABC', 'abc'],
  ],
  distinct: [['my-project', 'myproject']],
});

test('{{name}}: the maxLength option moves the limit', (t) => {
  const short = supplier({ maxLength: 3 });
  t.is<string, string>(short.authority('ABC'), 'abc');
  const error = t.throws(() => short.authority('abcd'), { instanceOf: InvalidIdentityError });
  t.regex(error!.reason, /4 characters long: the limit is 3/);
});

test('{{name}}: the plugin refuses an unknown option, naming it', (t) => {
  const error = t.throws(() => supplier({ noSuchOption: 1 }), { instanceOf: WiringError });
  t.regex(error!.message, /{{pluginId}}/);
  t.regex(error!.message, /noSuchOption/);
});
