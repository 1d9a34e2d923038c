// The test files `npm test` runs after all the others, one at a time. Each asserts that no
// Raft election happens (under a flood of 1 MiB appends; across the README walkthrough). On two
// shared cores another test file beside them can starve their members' event loops past an
// election timeout, which says something of the machine, not of Baton: alone, they measure the
// members themselves. Everything else is as package.json's "ava" section sets it.
export default {
  files: ['dist/test/security/data-plane-attacks.test.js', 'dist/test/cli/walkthrough.test.js'],
  timeout: '2m',
  workerThreads: false,
  concurrency: 1,
  environmentVariables: { NODE_OPTIONS: '--conditions=baton-internal' },
};
