import test from 'ava';
import { objectStoreSuite } from '../../../framework/conformance/object-store-suite.js';
import { FsObjectStore } from '../../../plugins/fs/fs-object-store.js';
import { fsStoreFixture } from './store-fixture.js';

objectStoreSuite({
  test,
  name: 'fs object store',
  supports: { conditionalPut: true },
  factory: () => fsStoreFixture('baton-fs-objects', (dir) => new FsObjectStore({ dir })),
});
