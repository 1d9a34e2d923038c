// Fakes for unit tests: a single-member consensus and the small state machine the suites use.
export * from './local-consensus.js';
export * from '../../conformance/kv-state-machine.js';
export * from '../../consensus/canonical-json.js';
export * from '../../consensus/idempotency-window.js';
export * from './fake-cluster.js';
