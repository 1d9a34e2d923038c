// File-backed implementations of the store contracts: the embedded durable default.
export { FsObjectStore, type FsObjectStoreOptions } from './fs-object-store.js';
export { FsAuditStore, type FsAuditStoreOptions } from './fs-audit-store.js';
export { fsObjectStorePlugin, fsAuditStorePlugin } from './plugins.js';
