import test from 'ava';
import { objectStoreSuite } from '@baton/conformance/internal/object-store-suite.js';
import { FsObjectStore } from '@baton/plugin-fs/internal/fs-object-store.js';
import { fsStoreFixture } from './store-fixture.js';

objectStoreSuite({
  test,
  name: 'fs object store',
  supports: { conditionalPut: true },
  factory: () => fsStoreFixture('baton-fs-objects', (dir) => new FsObjectStore({ dir })),
});
