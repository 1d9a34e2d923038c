export * from './plugin.js';
export * from './host.js';
export * from './wiring-error.js';
export * from './config.js';
export * from './system-clock.js';
export * from './system-rng.js';
export * from './pino-logger.js';
export * from './system-plugins.js';
