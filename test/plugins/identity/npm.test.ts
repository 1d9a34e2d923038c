import { builtinModules } from 'node:module';
import test from 'ava';
import fc from 'fast-check';
import { InvalidIdentityError } from '@baton/contracts/internal/identity-supplier.js';
import { RNG } from '@baton/contracts/internal/rng.js';
import { createHost } from '@baton/kernel/internal/host.js';
import { WiringError } from '@baton/kernel/internal/wiring-error.js';
import { identitySupplierSuite } from '@baton/conformance/internal/identity-supplier-suite.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { NpmIdentitySupplier, npmIdentityPlugin } from '@baton/plugin-identity/internal/npm.js';
import { supplierFromPlugin } from './supplier-from-plugin.js';

const VALID = [
  'some-package',
  'example.com',
  'under_score',
  '123numeric',
  '@npm/thingy',
  '@jane/foo.js',
  '@babel/core',
  '@types/node',
  '@scope/_private',
  'lodash.merge',
  'a',
  'x'.repeat(214),
  '@s/' + 'x'.repeat(211),
];

const NEVER_VALID = [
  { input: '', why: /must not be empty/ },
  { input: ' leading-space', why: /start or end with whitespace/ },
  { input: 'trailing-space ', why: /start or end with whitespace/ },
  { input: '.hidden', why: /must not start with a period/ },
  { input: '_private', why: /must not start with an underscore/ },
  { input: '-leading-dash', why: /must not start with a hyphen/ },
  { input: 'node_modules', why: /node_modules is reserved/ },
  { input: 'NODE_MODULES', why: /node_modules is reserved/ },
  { input: 'favicon.ico', why: /favicon\.ico is reserved/ },
  { input: 'two words', why: /U\+0020 \(space\), which is not URL-safe/ },
  { input: 'a/b', why: /"\/", which is not URL-safe: only a scoped name/ },
  { input: 'a:b', why: /":", which is not URL-safe/ },
  { input: 'café', why: /U\+00E9 "é", which is not URL-safe/ },
  { input: 'crab🦀', why: /U\+1F980 "🦀", which is not URL-safe/ },
  { input: 'lone\ud800', why: /U\+D800, which is not URL-safe/ },
  { input: '@scope', why: /@scope\/name/ },
  { input: '@scope/', why: /@scope\/name/ },
  { input: '@/name', why: /@scope\/name/ },
  { input: '@a/b/c', why: /@scope\/name/ },
  { input: '@sc ope/name', why: /U\+0020 \(space\), which is not URL-safe/ },
  { input: '@scope/.name', why: /after the scope must not start with a period/ },
];

const NOT_FOR_NEW_PACKAGES = [
  { input: 'http', why: /http is a Node\.js core module name/ },
  { input: 'fs', why: /fs is a Node\.js core module name/ },
  { input: 'child_process', why: /core module/ },
  { input: 'Http', why: /core module/ },
  { input: 'JSONStream', why: /must be lowercase.*"jsonstream"/ },
  { input: '@Scope/name', why: /must be lowercase/ },
  { input: 'x'.repeat(215), why: /215 characters long: npm allows at most 214/ },
  { input: '@s/' + 'x'.repeat(212), why: /215 characters long/ },
  { input: 'crazy!', why: /"!": npm no longer allows any of ~'!\(\)\*/ },
  { input: "it's", why: /"'"/ },
  { input: '~tilde', why: /"~"/ },
  { input: 'star*', why: /"\*"/ },
  { input: '(paren)', why: /"\("/ },
];

identitySupplierSuite({
  test,
  name: 'npm identity',
  factory: supplierFromPlugin(npmIdentityPlugin),
  valid: VALID,
  invalid: [...NEVER_VALID, ...NOT_FOR_NEW_PACKAGES],
  // npm compares names exactly: no two spellings name one package.
  equivalent: [],
  distinct: [
    ['@babel/core', 'babel-core'],
    ['@a/b', '@b/a'],
    ['foo.bar', 'foo-bar'],
  ],
  nameLike: fc.stringMatching(/^(@[a-z0-9][a-z0-9._~-]{0,12}\/)?[a-z0-9][a-z0-9._-]{0,20}$/),
});

identitySupplierSuite({
  test,
  name: 'npm identity (legacy names)',
  factory: supplierFromPlugin(npmIdentityPlugin, { legacyNames: true }),
  valid: [...VALID, ...NOT_FOR_NEW_PACKAGES.map((c) => c.input)],
  invalid: NEVER_VALID,
  equivalent: [],
  distinct: [
    ['JSONStream', 'jsonstream'],
    ['@Scope/name', '@scope/name'],
  ],
});

const npm = () => new NpmIdentitySupplier(new SeededRng(5));

test('npm: a valid name is its own authority, character for character', (t) => {
  const supplier = npm();
  for (const name of VALID) t.is<string, string>(supplier.authority(name), name);
});

test('npm: names built from the allowed alphabet are accepted unchanged', (t) => {
  const supplier = npm();
  const unscoped = fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,40}$/);
  const name = fc.oneof(
    unscoped,
    fc
      .tuple(
        fc.stringMatching(/^[a-z0-9-][a-z0-9._-]{0,20}$/),
        fc.stringMatching(/^[a-z0-9_-][a-z0-9._-]{0,40}$/),
      )
      .map(([scope, bare]) => `@${scope}/${bare}`),
  );
  const details = fc.check(
    fc.property(
      name.filter(
        (n) => !builtinModules.includes(n) && n !== 'node_modules' && n !== 'favicon.ico',
      ),
      (n) => supplier.authority(n) === n,
    ),
    { numRuns: 500 },
  );
  t.false(details.failed, fc.defaultReportMessage(details));
});

test('npm: every core module of the running Node is refused for new packages, and allowed under a scope', (t) => {
  const supplier = npm();
  for (const core of builtinModules) {
    t.throws(() => supplier.authority(core), { instanceOf: InvalidIdentityError }, core);
  }
  t.is<string, string>(supplier.authority('@acme/http'), '@acme/http');
  t.is<string, string>(supplier.authority('http-server'), 'http-server');
});

test('npm: the 214-character limit counts the scope', (t) => {
  const supplier = npm();
  const atLimit = '@scope/' + 'x'.repeat(214 - '@scope/'.length);
  t.is(atLimit.length, 214);
  t.is<string, string>(supplier.authority(atLimit), atLimit);
  t.throws(() => supplier.authority(atLimit + 'x'), {
    instanceOf: InvalidIdentityError,
    message: /215 characters/,
  });
});

test('npm: legacy mode accepts old packages but still refuses names npm never allowed', (t) => {
  const legacy = supplierFromPlugin(npmIdentityPlugin, { legacyNames: true })(new SeededRng(1));
  t.is<string, string>(legacy.authority('JSONStream'), 'JSONStream');
  t.is<string, string>(legacy.authority('http'), 'http');
  for (const name of ['node_modules', '.x', '_x', 'a b', '@a/b/c']) {
    t.throws(() => legacy.authority(name), { instanceOf: InvalidIdentityError }, name);
  }
});

test('npm: invalid options fail the host build, naming the option', (t) => {
  const error = t.throws(
    () =>
      createHost()
        .add(npmIdentityPlugin, { legacyNames: 'yes' })
        .value(RNG, new SeededRng(1))
        .build(),
    { instanceOf: WiringError },
  );
  t.regex(error!.message, /identity-npm/);
  t.regex(error!.message, /legacyNames/);
});
