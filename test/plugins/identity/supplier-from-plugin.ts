import type { IdentitySupplier } from '../../../framework/contracts/identity-supplier.js';
import { IDENTITY_SUPPLIER } from '../../../framework/contracts/identity-supplier.js';
import type { Rng } from '../../../framework/contracts/rng.js';
import { RNG } from '../../../framework/contracts/rng.js';
import { createHost } from '../../../framework/kernel/host.js';
import type { Plugin } from '../../../framework/kernel/plugin.js';

/**
 * Builds the supplier the way a deployment gets it: the plugin in a host, its options validated,
 * the Rng injected. The suites then test the wiring along with the behaviour.
 */
export function supplierFromPlugin<O>(
  plugin: Plugin<O>,
  options?: unknown,
): (rng: Rng) => IdentitySupplier {
  return (rng) => createHost().add(plugin, options).value(RNG, rng).build().get(IDENTITY_SUPPLIER);
}
