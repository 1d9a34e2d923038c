export * from './raft-storage.js';
export * from './memory-storage.js';
export * from './file-storage.js';
