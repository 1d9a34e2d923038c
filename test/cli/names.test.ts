import test from 'ava';
import { UsageError } from '@baton/cli/internal/cli-errors.js';
import { camelCase, pascalCase, validateName } from '@baton/cli/internal/scaffold/names.js';
import { kebabCase, pluginClassName } from '@baton/cli/internal/scaffold/plugin-contracts.js';

test('valid names are dash-separated lowercase words starting with a letter', (t) => {
  for (const name of ['a', 'acme', 'acme-store', 'acme2-s3-store', 'x'.repeat(50)])
    t.is(validateName('plugin', name), name);
});

test('invalid names are refused as usage errors saying the rule', (t) => {
  const cases: [string, RegExp][] = [
    ['', /empty/],
    ['Acme', /invalid plugin name "Acme": use lowercase/],
    ['2acme', /starting with a letter/],
    ['acme_store', /invalid/],
    ['acme--store', /single dashes/],
    ['acme-', /invalid/],
    ['-acme', /invalid/],
    ['../evil', /invalid/],
    ['acme store', /invalid/],
    ['x'.repeat(51), /51 characters long: keep it to 50/],
    ['baton', /reserved/],
  ];
  for (const [name, why] of cases) {
    const error = t.throws(
      () => validateName('plugin', name),
      { instanceOf: UsageError },
      JSON.stringify(name),
    );
    t.regex(error!.message, why);
  }
});

test('case conversions', (t) => {
  t.is(pascalCase('acme-s3-store'), 'AcmeS3Store');
  t.is(camelCase('acme-s3-store'), 'acmeS3Store');
  t.is(kebabCase('AcmeS3Store'), 'acme-s3-store');
});

test('the class name ends with the interface name without repeating the words the name already has', (t) => {
  t.is(pluginClassName('Acme', 'ObjectStore'), 'AcmeObjectStore');
  t.is(pluginClassName('AcmeObjectStore', 'ObjectStore'), 'AcmeObjectStore');
  t.is(pluginClassName('AcmeObject', 'ObjectStore'), 'AcmeObjectStore');
  t.is(pluginClassName('AcmeIdentity', 'IdentitySupplier'), 'AcmeIdentitySupplier');
  t.is(pluginClassName('AcmeStore', 'AuditStore'), 'AcmeStoreAuditStore');
});
