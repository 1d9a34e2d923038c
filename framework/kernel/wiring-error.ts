import { BatonError } from '@baton/contracts';

/**
 * A host's composition is wrong: a missing or duplicated provider, a cycle, an unknown plugin,
 * invalid options or config. Raised when the host is built or started, never later, and the
 * message names the token, plugin or config path at fault.
 */
export class WiringError extends BatonError {
  constructor(message: string) {
    super('wiring', message);
  }
}

/** A configuration file or environment override does not satisfy the schema. */
export class ConfigError extends BatonError {
  constructor(
    message: string,
    readonly issues: readonly { path: string; message: string }[] = [],
  ) {
    super('config', message);
  }
}
