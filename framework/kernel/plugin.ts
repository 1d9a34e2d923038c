import type { z } from 'zod';
import type { Token } from '@baton/contracts';

/** Resolves a token inside the host being built (typed by the token). */
export type Resolve = <T>(token: Token<T>) => T;

/** How a plugin supplies one contract: a class (constructor params carry `@inject`), a factory or a value. */
export type Provider<T> =
  | { useClass: new (...args: any[]) => T }
  | { useFactory: (resolve: Resolve) => T }
  | { useValue: T };

export interface PluginContext<O> {
  /** The plugin's options, already validated by its schema (defaults applied). */
  readonly options: O;
  /** Supplies one of the tokens the plugin declared in `provides`. One instance per host. */
  provide<T>(token: Token<T>, provider: Provider<T>): void;
}

/**
 * A plugin is an inert value: importing it registers nothing. A host decides which plugins it
 * uses and in what order; `register` runs only when that host is built. `requires` names the
 * tokens the plugin's instances need, which is how the host checks wiring at start and opens
 * resources in dependency order.
 */
export interface Plugin<O = unknown> {
  readonly id: string;
  readonly description?: string;
  readonly provides: readonly Token<unknown>[];
  readonly requires: readonly Token<unknown>[];
  readonly options: z.ZodType<O>;
  register(ctx: PluginContext<O>): void;
}

export interface PluginDefinition<Schema extends z.ZodType> {
  id: string;
  description?: string;
  provides: readonly Token<unknown>[];
  requires?: readonly Token<unknown>[];
  options: Schema;
  register(ctx: PluginContext<z.output<Schema>>): void;
}

const PLUGIN_ID = /^[a-z][a-z0-9-]*$/;

export function definePlugin<Schema extends z.ZodType>(
  definition: PluginDefinition<Schema>,
): Plugin<z.output<Schema>> {
  if (!PLUGIN_ID.test(definition.id)) {
    throw new Error(
      `plugin id ${JSON.stringify(definition.id)} is invalid: use lowercase letters, digits and dashes`,
    );
  }
  if (definition.provides.length === 0) {
    throw new Error(`plugin ${definition.id} provides nothing: list its tokens in "provides"`);
  }
  return Object.freeze({
    id: definition.id,
    description: definition.description,
    provides: Object.freeze([...definition.provides]),
    requires: Object.freeze([...(definition.requires ?? [])]),
    options: definition.options as z.ZodType<z.output<Schema>>,
    register: definition.register,
  });
}

/**
 * Instances may implement these; the host calls `start` in dependency order once everything is
 * wired, and `stop` in reverse order. Both are called at most once per host.
 */
export interface Lifecycle {
  start?(): Promise<void> | void;
  stop?(): Promise<void> | void;
}
