// In-memory reference implementations of the store contracts.
export { MemoryObjectStore } from './memory-object-store.js';
export { MemoryAuditStore } from './memory-audit-store.js';
export { memoryObjectStorePlugin, memoryAuditStorePlugin } from './plugins.js';
