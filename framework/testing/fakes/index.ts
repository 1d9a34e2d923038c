// Fakes for unit tests: a single-member consensus and the small state machine the suites use.
export * from './local-consensus.js';
export * from '@baton/conformance';
export * from '@baton/consensus';
export * from '@baton/consensus';
export * from './fake-cluster.js';
export * from './shared-consensus.js';
