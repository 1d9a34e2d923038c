#!/usr/bin/env node
// The process entry point of an authority node: `node dist/hosts/authority-node/main.js CONFIG.json`.
import { runHostProcess } from '../../framework/kernel/host-process.js';
import { startAuthorityNodeFromFile } from './host.js';

await runHostProcess({
  name: 'authority node',
  entryPoint: 'dist/hosts/authority-node/main.js',
  start: async (file) => {
    const { host, node } = await startAuthorityNodeFromFile({ file });
    return {
      host,
      listening: `authority node listening on ${node.publicAddress.url} (public), ${node.controlAddress.url} (control)`,
    };
  },
});
