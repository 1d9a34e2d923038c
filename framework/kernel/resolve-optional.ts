import type { Token } from '@baton/contracts';
import type { Resolve } from './plugin.js';

/**
 * Resolves a token a plugin can do without (peer routes, metrics, a probe override): undefined
 * when nothing in the host provides it, so the plugin need not list it in `requires`.
 */
export function resolveOptional<T>(resolve: Resolve, token: Token<T>): T | undefined {
  try {
    return resolve(token);
  } catch {
    return undefined;
  }
}
