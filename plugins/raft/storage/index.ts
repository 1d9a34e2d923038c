export * from './raft-storage.js';
export * from './memory-storage.js';
export * from '@baton/kernel';
export * from './file-storage.js';
