export * from './types.js';
export * from './storage.js';
export * from './raft-log.js';
export * from './progress.js';
export * from './read-index.js';
export * from './raft.js';
export * from './must-sync.js';
