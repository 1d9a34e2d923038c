import test from 'ava';
import { auditStoreSuite } from '../../../framework/conformance/audit-store-suite.js';
import { FsAuditStore } from '../../../plugins/fs/fs-audit-store.js';
import { fsStoreFixture } from './store-fixture.js';

auditStoreSuite({
  test,
  name: 'fs audit store',
  factory: () => fsStoreFixture('baton-fs-audit', (dir) => new FsAuditStore({ dir })),
});
