// Identity suppliers, one per ecosystem. Each is an inert plugin providing IDENTITY_SUPPLIER.
export * from './operation-id.js';
export * from './opaque.js';
export * from './npm.js';
export * from './pypi.js';
export * from './oci.js';
export * from './identity-plugin.js';
