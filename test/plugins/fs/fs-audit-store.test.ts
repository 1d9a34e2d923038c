import test from 'ava';
import { auditStoreSuite } from '@baton/conformance/internal/audit-store-suite.js';
import { FsAuditStore } from '@baton/plugin-fs/internal/fs-audit-store.js';
import { fsStoreFixture } from './store-fixture.js';

auditStoreSuite({
  test,
  name: 'fs audit store',
  factory: () => fsStoreFixture('baton-fs-audit', (dir) => new FsAuditStore({ dir })),
});
