import { z } from 'zod';
import { AUDIT_STORE, OBJECT_STORE } from '@baton/contracts';
import { definePlugin } from '@baton/kernel';
import { FsAuditStore } from './fs-audit-store.js';
import { FsObjectStore } from './fs-object-store.js';

const fsStoreOptions = z
  .object({
    dir: z
      .string()
      .min(1, 'give the directory the store keeps its files in (created on start if missing)'),
  })
  .strict();

export const fsObjectStorePlugin = definePlugin({
  id: 'fs-object-store',
  description: 'ObjectStore on the local file system: one fsynced file per object under <dir>/objects.',
  provides: [OBJECT_STORE],
  options: fsStoreOptions,
  register: (ctx) => ctx.provide(OBJECT_STORE, { useFactory: () => new FsObjectStore({ dir: ctx.options.dir }) }),
});

export const fsAuditStorePlugin = definePlugin({
  id: 'fs-audit-store',
  description: 'AuditStore on the local file system: one fsynced file per record under <dir>/audit.',
  provides: [AUDIT_STORE],
  options: fsStoreOptions,
  register: (ctx) => ctx.provide(AUDIT_STORE, { useFactory: () => new FsAuditStore({ dir: ctx.options.dir }) }),
});
