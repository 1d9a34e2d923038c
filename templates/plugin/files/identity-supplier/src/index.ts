export * from './options.js';
export * from './plugin.js';
export * from './{{fileName}}.js';
