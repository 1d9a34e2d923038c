import { z } from 'zod';
import { AUDIT_STORE, OBJECT_STORE } from '@baton/contracts';
import { definePlugin } from '@baton/kernel';
import { MemoryAuditStore } from './memory-audit-store.js';
import { MemoryObjectStore } from './memory-object-store.js';

export const memoryObjectStorePlugin = definePlugin({
  id: 'memory-object-store',
  description: 'ObjectStore in process memory: fast, isolated, gone when the process exits.',
  provides: [OBJECT_STORE],
  options: z.object({}).strict(),
  register: (ctx) => ctx.provide(OBJECT_STORE, { useFactory: () => new MemoryObjectStore() }),
});

export const memoryAuditStorePlugin = definePlugin({
  id: 'memory-audit-store',
  description: 'AuditStore in process memory: fast, isolated, gone when the process exits.',
  provides: [AUDIT_STORE],
  options: z.object({}).strict(),
  register: (ctx) => ctx.provide(AUDIT_STORE, { useFactory: () => new MemoryAuditStore() }),
});
