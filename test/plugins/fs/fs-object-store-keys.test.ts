import test from 'ava';
import fc from 'fast-check';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { InvalidKeyError } from '@baton/contracts/internal/object-store.js';
import { makeTempDir } from '@baton/testing/internal/temp-dir.js';
import { decodeName, encodeName } from '@baton/plugin-fs/internal/file-name-encoding.js';
import { FsObjectStore } from '@baton/plugin-fs/internal/fs-object-store.js';

const rejected: [key: string, reason: RegExp][] = [
  ['', /non-empty/],
  ['/etc/passwd', /absolute/],
  ['/', /absolute/],
  ['..', /"\.\."/],
  ['../outside', /"\.\."/],
  ['a/../../outside', /"\.\."/],
  ['a/..', /"\.\."/],
  ['.', /"\."/],
  ['a/./b', /"\."/],
  ['a\0b', /NUL/],
  ['x'.repeat(300), /segment 1 .* file name/],
  [`ok/${'é'.repeat(100)}`, /segment 2/],
  [Array.from({ length: 800 }, () => 'abcd').join('/'), /path/],
];

for (const [key, reason] of rejected) {
  test(`fs object store › key ${JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key)} is refused`, async (t) => {
    const temp = await makeTempDir('baton-fs-keys');
    t.teardown(temp.remove);
    const store = new FsObjectStore({ dir: temp.path });
    const put = await t.throwsAsync(store.put(key, new Uint8Array([1])), { instanceOf: InvalidKeyError });
    t.regex(put!.message, reason);
    t.regex(put!.message, /not allowed/);
    await t.throwsAsync(store.get(key), { instanceOf: InvalidKeyError });
    await t.throwsAsync(store.head(key), { instanceOf: InvalidKeyError });
    await t.throwsAsync(store.delete(key), { instanceOf: InvalidKeyError });
    await t.throwsAsync(store.put(key, new Uint8Array([1]), { ifAbsent: true }), { instanceOf: InvalidKeyError });
    t.deepEqual(await readdir(temp.path), [], 'a refused key wrote nothing, not even the store directories');
  });
}

test('fs object store › a prefix no key can have lists nothing instead of failing', async (t) => {
  const temp = await makeTempDir('baton-fs-keys');
  t.teardown(temp.remove);
  const store = new FsObjectStore({ dir: temp.path });
  await store.put('a/b', new Uint8Array([1]));
  for (const prefix of ['../', '/a', 'a/../', 'a\0', `${'x'.repeat(300)}/`]) {
    t.deepEqual(await store.list(prefix), { objects: [] }, JSON.stringify(prefix));
  }
});

test('fs object store › a key with the longest segment a file name holds is stored and listed', async (t) => {
  const temp = await makeTempDir('baton-fs-keys');
  t.teardown(temp.remove);
  const store = new FsObjectStore({ dir: temp.path });
  const longest = `dir/${'x'.repeat(253)}`;
  await store.put(longest, new Uint8Array([1]));
  await t.throwsAsync(store.put(`${longest}x`, new Uint8Array([1])), { instanceOf: InvalidKeyError });
  t.deepEqual(await store.list(longest), { objects: [{ key: longest, size: 1 }] }, 'the key as its own prefix');
  t.deepEqual(await store.list('dir/'), { objects: [{ key: longest, size: 1 }] });
});

test('fs file names › encoding round-trips any string and stays portable', (t) => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }), (a, b) => {
      for (const s of [a, b, `${a}${b}`]) {
        const name = encodeName(s);
        if (!/^[a-z0-9_%~-]*$/.test(name)) return false;
        if (decodeName(name) !== s) return false;
      }
      return true;
    }),
  );
  t.is(decodeName('%61'), undefined, 'a non-canonical spelling is not a name');
  t.is(decodeName('%4A'), undefined, 'uppercase hex is not canonical');
  t.is(decodeName('~d83d'), '\ud83d', 'a lone surrogate is a valid code unit');
  t.is(encodeName('A'), '%41');
});

test('fs object store › list matches a sorted model for any set of keys and page size', async (t) => {
  const temp = await makeTempDir('baton-fs-model');
  t.teardown(temp.remove);
  let run = 0;
  // A small alphabet full of the characters that order subtly around "/": ".", "-", "0", "é",
  // an astral emoji and U+FFFF, so sibling files and directories interleave.
  const char = fc.constantFrom('a', 'b', '/', '.', '-', '0', 'é', '😀', '\uffff', 'A');
  const key = fc
    .array(char, { minLength: 1, maxLength: 6 })
    .map((cs) => cs.join(''))
    .filter((k) => !k.startsWith('/') && !k.split('/').some((s) => s === '.' || s === '..'));
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(key, { maxLength: 25 }),
      fc.constantFrom('', 'a', 'a/', 'a.', 'b/a', '0'),
      fc.integer({ min: 1, max: 6 }),
      async (keys, prefix, limit) => {
        const store = new FsObjectStore({ dir: join(temp.path, String(++run)) });
        for (const k of keys) await store.put(k, new Uint8Array([k.length]));
        const expected = keys.filter((k) => k.startsWith(prefix)).sort();
        const whole = (await store.list(prefix, { limit: 1000 })).objects.map((o) => o.key);
        const paged: string[] = [];
        let startAfter: string | undefined;
        do {
          const page = await store.list(prefix, { startAfter, limit });
          if (page.objects.length > limit) return false;
          paged.push(...page.objects.map((o) => o.key));
          startAfter = page.next;
        } while (startAfter !== undefined);
        t.deepEqual(whole, expected);
        t.deepEqual(paged, expected);
        return true;
      },
    ),
    { numRuns: 40 },
  );
});
