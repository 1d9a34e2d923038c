// Baton's own test support, not published: the simulation harness, fakes, the Raft simulation,
// the crash harness and an S3 API server (s3rver). Launchers of redis-server and etcd are in
// @baton/conformance, for plugin authors' own tests too.
export * from './sim/index.js';
export * from './fakes/index.js';
export * from './raft-sim/index.js';
export * from './crash/index.js';
export * from './s3-server.js';
export * from './temp-dir.js';
