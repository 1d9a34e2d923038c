// The contracts of Baton, one file each: an interface, its injection token and its typed errors.
export * from './token.js';
export * from './errors.js';
export * from './clock.js';
export * from './rng.js';
export * from './logger.js';
export * from './peer-transport.js';
export * from './metadata-consensus.js';
export * from './object-store.js';
export * from './audit-store.js';
export * from './identity-supplier.js';
