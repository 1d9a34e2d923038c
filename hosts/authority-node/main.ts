#!/usr/bin/env node
// The process entry point of an authority node: `node hosts/authority-node/dist/main.js CONFIG.json`.
import { runHostProcess, withDataDirLock } from '@baton/kernel';
import { loadAuthorityNodeConfig, startAuthorityNode } from './host.js';

await runHostProcess({
  name: 'authority node',
  entryPoint: 'hosts/authority-node/dist/main.js',
  help: `Starts one authority node from a JSON config file and runs it until SIGINT or SIGTERM.
Every key is described in docs/configuration.md (generated from the schemas); examples are in
hosts/authority-node/examples/. Any value can be overridden from the environment as
BATON__path__to__key=value. The node locks its dataDir (node.lock): a second node on the same
directory refuses to start.

Exit codes: 0 stopped cleanly, 1 failed to start or to stop, 2 usage.`,
  start: async (file) => {
    const config = await loadAuthorityNodeConfig({ file });
    return withDataDirLock(config.dataDir, 'authority node', async () => {
      const { host, node } = await startAuthorityNode(config);
      return {
        host,
        listening: `authority node listening on ${node.publicAddress.url} (public), ${node.controlAddress.url} (control)`,
      };
    });
  },
});
