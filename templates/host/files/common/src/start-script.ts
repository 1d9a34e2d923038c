import { parseArgs } from 'node:util';
import { BatonError } from '@baton/contracts';
import { loadConfig, type Host } from '@baton/kernel';
import { hostConfig } from './config.js';
import { hostBuilder } from './host.js';

/**
 * Starts {{name}} from its config file (`--config`, default config/host.json; BATON__*
 * environment variables override it) and stops it cleanly on Ctrl-C or SIGTERM. `where` says,
 * once the host runs, where its APIs answer.
 */
export function runStartScript(where: (host: Host) => string): void {
  start(where).catch((error: unknown) => {
    // Baton's errors say what was wrong and what to do: no stack trace for them.
    const message = error instanceof BatonError ? error.message : String((error as Error)?.stack ?? error);
    process.stderr.write(`{{name}} cannot start: ${message}\n`);
    process.exit(1);
  });
}

async function start(where: (host: Host) => string): Promise<void> {
  const { values } = parseArgs({ options: { config: { type: 'string', default: 'config/host.json' } } });
  const config = await loadConfig(hostConfig, { file: values.config });
  const host = hostBuilder(config).build();
  await host.start();
  process.stdout.write(`{{name}} is running: ${where(host)}\n`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal}: stopping {{name}}\n`);
    host.stop().then(
      () => process.exit(0),
      (error: Error) => {
        process.stderr.write(`{{name}} did not stop cleanly: ${error.message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
