#!/usr/bin/env node
// The process entry point of a stream node: `node hosts/stream-node/dist/main.js CONFIG.json`.
import { runHostProcess, withDataDirLock } from '@baton/kernel';
import { loadStreamNodeConfig, startStreamNode } from './host.js';

await runHostProcess({
  name: 'stream node',
  entryPoint: 'hosts/stream-node/dist/main.js',
  help: `Starts one stream node from a JSON config file and runs it until SIGINT or SIGTERM.
Every key is described in docs/configuration.md (generated from the schemas); examples are in
hosts/stream-node/examples/. Any value can be overridden from the environment as
BATON__path__to__key=value. The node locks its dataDir (node.lock): a second node on the same
directory refuses to start.

Exit codes: 0 stopped cleanly, 1 failed to start or to stop, 2 usage.`,
  start: async (file) => {
    const config = await loadStreamNodeConfig({ file });
    return withDataDirLock(config.dataDir, 'stream node', async () => {
      const { host, node } = await startStreamNode(config);
      return { host, listening: `stream node listening on ${node.url}` };
    });
  },
});
