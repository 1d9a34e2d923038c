#!/usr/bin/env node
// The process entry point of a stream node: `node dist/hosts/stream-node/main.js CONFIG.json`.
// Starts the host the file describes and stops it on SIGINT or SIGTERM, so a supervisor (or
// Ctrl-C) ends it with its WAL synced and its listener closed.
import { startStreamNodeFromFile } from './host.js';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node dist/hosts/stream-node/main.js CONFIG.json (the stream node config file)\n');
  process.exit(2);
}

try {
  const { host, node } = await startStreamNodeFromFile({ file });
  process.stdout.write(`stream node listening on ${node.url}\n`);
  let stopping: Promise<void> | undefined;
  const stop = (): void => {
    // Ctrl-C reaches the whole process group and a supervisor may signal as well: stop once.
    stopping ??= host.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`stream node did not stop cleanly: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop).on('SIGTERM', stop);
} catch (error) {
  process.stderr.write(`stream node failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
