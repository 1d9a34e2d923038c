import {
  type IdentitySupplier,
  IDENTITY_SUPPLIER,
} from '@baton/contracts/internal/identity-supplier.js';
import { type Rng, RNG } from '@baton/contracts/internal/rng.js';
import { createHost } from '@baton/kernel/internal/host.js';
import type { Plugin } from '@baton/kernel/internal/plugin.js';

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
