// The stream-transfer variant's composition root: config schema, default config, host.
export * from './config.js';
export * from './host.js';
