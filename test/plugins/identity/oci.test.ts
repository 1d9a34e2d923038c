import test from 'ava';
import fc from 'fast-check';
import { InvalidIdentityError } from '@baton/contracts/internal/identity-supplier.js';
import { RNG } from '@baton/contracts/internal/rng.js';
import { createHost } from '@baton/kernel/internal/host.js';
import { WiringError } from '@baton/kernel/internal/wiring-error.js';
import { identitySupplierSuite } from '@baton/conformance/internal/identity-supplier-suite.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { OciIdentitySupplier, ociIdentityPlugin } from '@baton/plugin-identity/internal/oci.js';
import { supplierFromPlugin } from './supplier-from-plugin.js';

const PATH_COMPONENT = /^[a-z0-9]{1,6}((\.|_|__|-{1,3})[a-z0-9]{1,6}){0,3}$/;
const repositoryName = fc
  .array(fc.stringMatching(PATH_COMPONENT), { minLength: 1, maxLength: 4 })
  .map((c) => c.join('/'));

// Refused whatever registry is served: they break the grammar of a repository name.
const MALFORMED = [
  { input: '', why: /must not be empty/ },
  { input: 'Ubuntu', why: /"Ubuntu" must be lowercase/ },
  { input: 'team/App', why: /"App" must be lowercase/ },
  { input: 'Registry.Example.COM/team/app', why: /"Registry\.Example\.COM" must be lowercase/ },
  { input: 'foo___bar', why: /one or two "_"/ },
  { input: 'foo_-bar', why: /separated by/ },
  { input: 'foo.-bar', why: /separated by/ },
  { input: 'foo..bar', why: /separated by/ },
  { input: '-foo', why: /must start and end with a letter or digit/ },
  { input: 'foo-', why: /must start and end with a letter or digit/ },
  { input: '.foo', why: /must start and end with a letter or digit/ },
  { input: '/foo', why: /empty path component/ },
  { input: 'foo/', why: /empty path component/ },
  { input: 'foo//bar', why: /empty path component/ },
  { input: 'ubuntu:latest', why: /":latest" is a tag/ },
  { input: 'library/ubuntu:22.04', why: /":22\.04" is a tag/ },
  { input: 'localhost:5000', why: /":5000" is a tag/ },
  { input: 'ubuntu@sha256:abcd', why: /"@sha256:abcd" is a digest/ },
  { input: 'localhost:5000/app', why: /"localhost:5000\/" is the host of a registry/ },
  { input: '[::1]:5000/x', why: /is the host of a registry/ },
  { input: 'a/b:c/d', why: /":"/ },
  { input: 'foo bar', why: /U\+0020 \(space\)/ },
  { input: 'café', why: /U\+00E9 "é"/ },
];

identitySupplierSuite({
  test,
  name: 'oci identity',
  factory: supplierFromPlugin(ociIdentityPlugin),
  valid: [
    'ubuntu',
    'library/ubuntu',
    'a',
    '0',
    'a/b/c/d',
    'foo.bar',
    'foo_bar',
    'foo__bar',
    'foo-bar',
    'foo---bar',
    'a.b_c__d-e--f',
    // Without a served registry, a dotted first component is an ordinary path component.
    'registry.example.com/team/app',
    'localhost/app',
    'a'.repeat(255),
  ],
  invalid: [
    ...MALFORMED,
    { input: 'a'.repeat(256), why: /is 256 characters: OCI clients accept at most 255/ },
    { input: 'localhost:5000/app', why: /no registry is configured \(option registry\)/ },
  ],
  // A repository has one spelling: the spec's grammar leaves nothing to normalise.
  equivalent: [],
  distinct: [
    ['registry.example.com/team/app', 'team/app'],
    ['foo_bar', 'foo__bar'],
    ['foo-bar', 'foo--bar'],
    ['foo.bar', 'foo-bar'],
  ],
  nameLike: repositoryName,
});

identitySupplierSuite({
  test,
  name: 'oci identity (served registry)',
  factory: supplierFromPlugin(ociIdentityPlugin, { registry: 'Registry.Example.com:05000' }),
  valid: [
    'team/app',
    'registry.example.com:5000/team/app',
    'other.example.com/team/app',
    'registry.example.com/team/app',
    'registry.example.com:5000/registry.example.com',
    // 25 characters of host and port, one '/', 229 of name: exactly 255.
    'a'.repeat(229),
  ],
  invalid: [
    ...MALFORMED.filter((c) => c.input !== 'localhost:5000/app'),
    { input: 'a'.repeat(230), why: /is 256 characters with registry registry\.example\.com:5000/ },
    { input: 'localhost:5000/app', why: /this deployment serves registry\.example\.com:5000/ },
    {
      input: 'registry.example.com:5000/registry.example.com:5000/app',
      why: /repeats the registry host/,
    },
  ],
  equivalent: [
    ['registry.example.com:5000/team/app', 'team/app'],
    ['REGISTRY.EXAMPLE.COM:5000/team/app', 'team/app'],
    ['registry.example.com:005000/team/app', 'team/app'],
  ],
  distinct: [
    ['other.example.com/team/app', 'team/app'],
    ['registry.example.com/team/app', 'team/app'],
  ],
  nameLike: repositoryName,
});

const oci = () => new OciIdentitySupplier(new SeededRng(11));

test('oci: names in the spec grammar are accepted unchanged, exactly when they fit in 255 characters', (t) => {
  const supplier = oci();
  const long = fc
    .array(fc.stringMatching(PATH_COMPONENT), { minLength: 1, maxLength: 40 })
    .map((c) => c.join('/'));
  const details = fc.check(
    fc.property(fc.oneof(repositoryName, long), (name) => {
      try {
        return supplier.authority(name) === name && name.length <= 255;
      } catch (error) {
        return error instanceof InvalidIdentityError && name.length > 255;
      }
    }),
    { numRuns: 500 },
  );
  t.false(details.failed, fc.defaultReportMessage(details));
});

test('oci: any uppercase letter in the repository path is refused', (t) => {
  const supplier = oci();
  const details = fc.check(
    fc.property(repositoryName, fc.nat(), (name, at) => {
      const letters = [...name].flatMap((c, i) => (/[a-z]/.test(c) ? [i] : []));
      fc.pre(letters.length > 0);
      const i = letters[at % letters.length];
      const shouted = name.slice(0, i) + name[i].toUpperCase() + name.slice(i + 1);
      try {
        supplier.authority(shouted);
        return false;
      } catch (error) {
        return error instanceof InvalidIdentityError && /lowercase/.test(error.reason);
      }
    }),
    { numRuns: 300 },
  );
  t.false(details.failed, fc.defaultReportMessage(details));
});

test('oci: only the served registry is a host; any other first component is a path', (t) => {
  const plain = oci();
  t.is<string, string>(plain.authority('team/app'), 'team/app');
  t.is<string, string>(plain.authority('registry.example.com/app'), 'registry.example.com/app');
  // Docker would take "Team" (or any dotted name) as a registry; here it is a path component.
  t.throws(() => plain.authority('Team/app'), {
    instanceOf: InvalidIdentityError,
    message: /"Team" must be lowercase/,
  });
  const served = supplierFromPlugin(ociIdentityPlugin, { registry: 'localhost:5000' })(
    new SeededRng(1),
  );
  t.is<string, string>(served.authority('LocalHost:05000/app'), 'app');
  t.is<string, string>(served.authority('localhost/app'), 'localhost/app');
  t.throws(() => served.authority('localhost:5001/app'), {
    instanceOf: InvalidIdentityError,
    message: /serves localhost:5000/,
  });
});

test('oci: the 255 limit counts the served registry, at the boundary', (t) => {
  const plain = oci();
  t.is<string, string>(plain.authority('a'.repeat(255)), 'a'.repeat(255));
  t.throws(() => plain.authority('a'.repeat(256)), {
    instanceOf: InvalidIdentityError,
    message: /256 characters/,
  });
  const host = 'registry.example.com';
  const served = supplierFromPlugin(ociIdentityPlugin, { registry: host })(new SeededRng(1));
  const bare = 'a'.repeat(255 - host.length - 1);
  t.is<string, string>(served.authority(bare), bare);
  t.is<string, string>(served.authority(`${host}/${bare}`), bare);
  t.throws(() => served.authority(bare + 'a'), {
    instanceOf: InvalidIdentityError,
    message: /256 characters with registry/,
  });
  t.throws(() => served.authority(`${host}/${bare}a`), {
    instanceOf: InvalidIdentityError,
    message: /256 characters with registry/,
  });
});

test('oci: an invalid registry option fails the host build, naming the option', (t) => {
  for (const registry of ['not a host', 'host:99999', 'team/app', '']) {
    const error = t.throws(
      () => createHost().add(ociIdentityPlugin, { registry }).value(RNG, new SeededRng(1)).build(),
      { instanceOf: WiringError },
      registry,
    );
    t.regex(error!.message, /identity-oci/);
    t.regex(error!.message, /registry/);
  }
});
