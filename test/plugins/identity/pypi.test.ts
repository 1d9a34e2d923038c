import test from 'ava';
import fc from 'fast-check';
import { InvalidIdentityError } from '@baton/contracts/internal/identity-supplier.js';
import { identitySupplierSuite } from '@baton/conformance/internal/identity-supplier-suite.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { PypiIdentitySupplier, pypiIdentityPlugin } from '@baton/plugin-identity/internal/pypi.js';
import { supplierFromPlugin } from './supplier-from-plugin.js';

identitySupplierSuite({
  test,
  name: 'pypi identity',
  factory: supplierFromPlugin(pypiIdentityPlugin),
  valid: [
    'requests',
    'Django',
    'zope.interface',
    'python-dateutil',
    'typing_extensions',
    'ruamel.yaml.clib',
    'A',
    '9',
    'Foo_Bar',
    'a-_.b',
  ],
  invalid: [
    { input: '', why: /must not be empty/ },
    { input: 'foo.', why: /must start and end with a letter or digit/ },
    { input: '-foo', why: /must start and end with a letter or digit/ },
    { input: '_private', why: /must start and end with a letter or digit/ },
    { input: '.', why: /must start and end/ },
    { input: 'foo bar', why: /U\+0020 \(space\) at position 3/ },
    { input: ' foo', why: /U\+0020 \(space\) at position 0/ },
    { input: 'föö', why: /U\+00F6 "ö" at position 1.*ASCII/ },
    { input: 'pac\u212Aage', why: /U\+212A/ },
    { input: 'foo/bar', why: /"\/"/ },
    { input: 'foo==1.0', why: /"="/ },
    { input: 'foo[extra]', why: /"\["/ },
    { input: 'foo@1.0', why: /"@"/ },
  ],
  equivalent: [
    ['Foo_Bar', 'foo-bar'],
    ['FOO.bar', 'foo-bar'],
    ['foo__-..bar', 'foo-bar'],
    ['Zope.Interface', 'zope-interface'],
    ['typing_extensions', 'Typing-Extensions'],
  ],
  distinct: [
    ['foobar', 'foo-bar'],
    ['foo1', 'foo-1'],
    ['foo-bar', 'bar-foo'],
  ],
  nameLike: fc.stringMatching(/^[A-Za-z0-9]([A-Za-z0-9._-]{0,30}[A-Za-z0-9])?$/),
});

const pypi = () => new PypiIdentitySupplier(new SeededRng(9));

test('pypi: the authority is the PEP 503 normalised name', (t) => {
  const supplier = pypi();
  const cases: [string, string][] = [
    ['Foo_Bar', 'foo-bar'],
    ['A.B-_C', 'a-b-c'],
    ['Django', 'django'],
    ['ruamel.yaml.clib', 'ruamel-yaml-clib'],
    ['a', 'a'],
  ];
  for (const [raw, normal] of cases) t.is<string, string>(supplier.authority(raw), normal, raw);
});

test('pypi: every respelling of a name (case, runs of -_.) is one authority', (t) => {
  const supplier = pypi();
  const normalised = fc
    .array(fc.stringMatching(/^[a-z0-9]{1,8}$/), { minLength: 1, maxLength: 5 })
    .map((p) => p.join('-'));
  const respell = (name: string, separators: string[], upper: boolean[]) => {
    let sep = 0;
    return name
      .split('-')
      .map((part, i) =>
        [...part].map((c, j) => (upper[(i * 7 + j) % upper.length] ? c.toUpperCase() : c)).join(''),
      )
      .reduce((acc, part) => acc + separators[sep++ % separators.length] + part);
  };
  const details = fc.check(
    fc.property(
      normalised,
      fc.array(fc.stringMatching(/^[-_.]{1,4}$/), { minLength: 1, maxLength: 5 }),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 9 }),
      (name, separators, upper) => {
        const spelled = respell(name, separators, upper);
        return supplier.authority(spelled) === name && supplier.authority(name) === name;
      },
    ),
    { numRuns: 500 },
  );
  t.false(details.failed, fc.defaultReportMessage(details));
});

test('pypi: every authority is lowercase with single dashes between letters and digits', (t) => {
  const supplier = pypi();
  const details = fc.check(
    fc.property(fc.stringMatching(/^[A-Za-z0-9]([A-Za-z0-9._-]{0,40}[A-Za-z0-9])?$/), (raw) =>
      /^[a-z0-9]+(-[a-z0-9]+)*$/.test(supplier.authority(raw)),
    ),
    { numRuns: 500 },
  );
  t.false(details.failed, fc.defaultReportMessage(details));
});

test('pypi: a name ending in a separator is refused, whatever the separator', (t) => {
  const supplier = pypi();
  for (const name of ['foo.', 'foo-', 'foo_', 'foo-.', '.foo', '_foo']) {
    t.throws(
      () => supplier.authority(name),
      { instanceOf: InvalidIdentityError, message: /start and end/ },
      name,
    );
  }
});
