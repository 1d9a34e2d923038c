import test from 'ava';
import fc from 'fast-check';
import { InvalidIdentityError } from '@baton/contracts/internal/identity-supplier.js';
import { RNG } from '@baton/contracts/internal/rng.js';
import { createHost } from '@baton/kernel/internal/host.js';
import { WiringError } from '@baton/kernel/internal/wiring-error.js';
import { identitySupplierSuite } from '@baton/conformance/internal/identity-supplier-suite.js';
import { SeededRng } from '@baton/conformance/internal/seeded-rng.js';
import { OpaqueIdentitySupplier, opaqueIdentityPlugin } from '@baton/plugin-identity/internal/opaque.js';
import { supplierFromPlugin } from './supplier-from-plugin.js';

identitySupplierSuite({
  test,
  name: 'opaque identity',
  factory: supplierFromPlugin(opaqueIdentityPlugin),
  valid: [
    'repo-1',
    'Mixed Case With Spaces',
    ' leading space',
    '日本語のリポジトリ',
    '🦀 crab',
    'a/b\\c:d',
    'x'.repeat(256),
  ],
  invalid: [
    { input: '', why: /empty/ },
    { input: 'bell\u0007', why: /control character U\+0007 at position 4/ },
    { input: 'new\nline', why: /control character U\+000A/ },
    { input: 'del\u007f', why: /U\+007F/ },
    { input: 'c1\u0085', why: /U\+0085/ },
    { input: 'half\ud800', why: /lone surrogate U\+D800/ },
    { input: '\udc00tail', why: /lone surrogate U\+DC00 at position 0/ },
    { input: 'x'.repeat(257), why: /257 bytes.*256 bytes/ },
    { input: 'é'.repeat(129), why: /258 bytes/ },
  ],
  equivalent: [
    ['e\u0301', '\u00e9'],
    ['\u1100\u1161\u11a8', '\uac01'],
    ['A\u030a', '\u00c5'],
  ],
  distinct: [
    ['a', 'A'],
    [' a', 'a'],
    ['ﬁ', 'fi'],
  ],
});

const supplier = () => new OpaqueIdentitySupplier(new SeededRng(3));
const noControls = (s: string) => !/[\p{Cc}\p{Cs}]/u.test(s);
const fitsIn = (bytes: number) => (s: string) =>
  s.length > 0 && Buffer.byteLength(s.normalize('NFC')) <= bytes;

test('opaque: any valid NFC string round-trips unchanged', (t) => {
  const opaque = supplier();
  const details = fc.check(
    fc.property(
      fc
        .string({ unit: 'grapheme', minLength: 1, maxLength: 40 })
        .map((s) => s.normalize('NFC'))
        .filter(noControls)
        .filter(fitsIn(256)),
      (s) => opaque.authority(s) === s,
    ),
    { numRuns: 500 },
  );
  t.false(details.failed, fc.defaultReportMessage(details));
});

test('opaque: any valid string maps to its NFC form, whatever its normalisation', (t) => {
  const opaque = supplier();
  const details = fc.check(
    fc.property(
      fc
        .string({ unit: 'grapheme-composite', minLength: 1, maxLength: 30 })
        .filter(noControls)
        .filter(fitsIn(256)),
      fc.constantFrom('NFC', 'NFD', 'NFKC', 'NFKD') as fc.Arbitrary<'NFC' | 'NFD'>,
      (s, form) => {
        const spelled = s.normalize(form);
        return opaque.authority(spelled) === spelled.normalize('NFC');
      },
    ),
    { numRuns: 500 },
  );
  t.false(details.failed, fc.defaultReportMessage(details));
});

test('opaque: the byte limit counts UTF-8 bytes of the NFC form, at the boundary', (t) => {
  const opaque = supplier();
  // 'é' is two bytes in NFC but three in NFD: 128 of them fit exactly, whichever way they are typed.
  t.is<string, string>(opaque.authority('é'.repeat(128)), 'é'.repeat(128));
  t.is<string, string>(opaque.authority('e\u0301'.repeat(128)), 'é'.repeat(128));
  t.is<string, string>(opaque.authority('🦀'.repeat(64)), '🦀'.repeat(64));
  const error = t.throws(() => opaque.authority('🦀'.repeat(64) + 'x'), {
    instanceOf: InvalidIdentityError,
  });
  t.regex(error!.reason, /257 bytes/);
});

test('opaque: maxBytes option moves the limit', (t) => {
  const small = supplierFromPlugin(opaqueIdentityPlugin, { maxBytes: 4 })(new SeededRng(1));
  t.is<string, string>(small.authority('abcd'), 'abcd');
  const error = t.throws(() => small.authority('abcde'), { instanceOf: InvalidIdentityError });
  t.regex(error!.reason, /5 bytes.*limit is 4 bytes \(option maxBytes\)/);
  const large = supplierFromPlugin(opaqueIdentityPlugin, { maxBytes: 1024 })(new SeededRng(1));
  t.is<string, string>(large.authority('y'.repeat(1024)), 'y'.repeat(1024));
});

test('opaque: invalid options fail the host build, naming the option', (t) => {
  for (const options of [
    { maxBytes: 0 },
    { maxBytes: 1.5 },
    { maxBytes: '256' },
    { maxbytes: 10 },
  ]) {
    const error = t.throws(
      () => createHost().add(opaqueIdentityPlugin, options).value(RNG, new SeededRng(1)).build(),
      {
        instanceOf: WiringError,
      },
    );
    t.regex(error!.message, /identity-opaque/);
    t.regex(error!.message, /maxBytes|maxbytes/);
  }
});

test('opaque: a host without an Rng fails at build, naming the missing token', (t) => {
  const error = t.throws(() => createHost().add(opaqueIdentityPlugin).build(), {
    instanceOf: WiringError,
  });
  t.regex(error!.message, /identity-opaque requires baton\.Rng/);
});

test('a huge refused input is shortened in the error message but kept whole in the error', (t) => {
  const supplier = new OpaqueIdentitySupplier(new SeededRng(1), { maxBytes: 256 });
  const input = 'x'.repeat(100_000);
  const error = t.throws(() => supplier.authority(input), { instanceOf: InvalidIdentityError });
  t.is(error!.input, input);
  t.true(error!.message.length < 600, `message is ${error!.message.length} characters`);
  t.true(error!.message.includes('…'));
});
