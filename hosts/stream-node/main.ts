#!/usr/bin/env node
// The process entry point of a stream node: `node dist/hosts/stream-node/main.js CONFIG.json`.
import { runHostProcess } from '../../framework/kernel/host-process.js';
import { startStreamNodeFromFile } from './host.js';

await runHostProcess({
  name: 'stream node',
  entryPoint: 'dist/hosts/stream-node/main.js',
  start: async (file) => {
    const { host, node } = await startStreamNodeFromFile({ file });
    return { host, listening: `stream node listening on ${node.url}` };
  },
});
