import 'reflect-metadata';
import { container as rootContainer, instanceCachingFactory, type DependencyContainer } from 'tsyringe';
import { type Token, tokenName } from '@baton/contracts';
import type { Lifecycle, Plugin, Provider, Resolve } from './plugin.js';
import { formatIssues } from './zod-issues.js';
import { WiringError } from './wiring-error.js';

/** A plugin chosen for a host, with the options it was given (validated at build). */
export interface PluginUse<O = unknown> {
  plugin: Plugin<O>;
  options?: unknown;
  /** Where the options came from, for error messages (e.g. "plugins[2].options"). */
  configPath?: string;
}

interface Layered {
  use: PluginUse;
  layer: 'default' | 'added';
}

/**
 * Builds a host from a list of plugins: defaults first, then `add`ed ones. An added plugin
 * overrides a default that provides the same token; two added plugins for one token are a
 * mistake and fail the build. Nothing is constructed until `start`.
 */
export class HostBuilder {
  private readonly entries: Layered[] = [];
  private readonly values = new Map<symbol, unknown>();

  constructor(defaults: readonly PluginUse[] = []) {
    for (const use of defaults) this.entries.push({ use, layer: 'default' });
  }

  add<O>(plugin: Plugin<O>, options?: unknown, configPath?: string): this {
    this.entries.push({ use: { plugin, options, configPath }, layer: 'added' });
    return this;
  }

  /** Supplies a ready value for a token (configuration, a test fake); it overrides any plugin. */
  value<T>(token: Token<T>, value: T): this {
    this.values.set(token, value);
    return this;
  }

  build(): Host {
    const chosen = this.choosePlugins();
    const registrations = new Map<symbol, { plugin: string; provider: Provider<unknown> }>();
    const providersOf = new Map<symbol, Plugin<unknown>>();
    // Every plugin's options are checked before any registers, so all that are wrong are told at once.
    const parsedOptions = chosen.map(({ plugin, options }) => plugin.options.safeParse(options ?? {}));
    const invalid = chosen.flatMap(({ plugin, configPath }, i) => {
      const parsed = parsedOptions[i];
      if (parsed.success) return [];
      const where = configPath ?? `options of plugin ${plugin.id}`;
      return [`invalid options for plugin ${plugin.id}:\n${formatIssues(parsed.error.issues, where)}`];
    });
    if (invalid.length > 0) throw new WiringError(invalid.join('\n'));
    for (const [i, { plugin }] of chosen.entries()) {
      const parsed = parsedOptions[i] as { data: unknown };
      const declared = new Set<symbol>(plugin.provides);
      plugin.register({
        options: parsed.data,
        provide: (token, provider) => {
          if (!declared.has(token)) {
            throw new WiringError(
              `plugin ${plugin.id} provided ${tokenName(token)} without declaring it in "provides"`,
            );
          }
          registrations.set(token, { plugin: plugin.id, provider: provider as Provider<unknown> });
        },
      });
      for (const token of plugin.provides) {
        if (!registrations.has(token) && !this.values.has(token)) {
          throw new WiringError(
            `plugin ${plugin.id} declares ${tokenName(token)} in "provides" but did not provide it in register()`,
          );
        }
        providersOf.set(token, plugin);
      }
    }
    for (const { plugin } of chosen) {
      for (const token of plugin.requires) {
        if (!providersOf.has(token) && !this.values.has(token)) {
          throw new WiringError(
            `plugin ${plugin.id} requires ${tokenName(token)}, but no plugin provides it: add a plugin that provides ${tokenName(token)}`,
          );
        }
      }
    }
    const order = startOrder(chosen.map((c) => c.plugin), providersOf, this.values);
    return new Host(order, registrations, this.values);
  }

  private choosePlugins(): PluginUse[] {
    const owner = new Map<symbol, Layered>();
    for (const entry of this.entries) {
      for (const token of entry.use.plugin.provides) {
        const previous = owner.get(token);
        if (previous && previous.layer === 'added' && entry.layer === 'added') {
          throw new WiringError(
            `${tokenName(token)} is provided by two plugins, ${previous.use.plugin.id} and ${entry.use.plugin.id}: keep one`,
          );
        }
        owner.set(token, entry);
      }
    }
    // A plugin stays only if it still owns at least one of its tokens; a default whose every
    // token was overridden drops out entirely, so its register() never runs.
    const kept = new Set([...owner.values()]);
    return this.entries.filter((e) => kept.has(e)).map((e) => e.use);
  }
}

/** Orders plugins so every plugin comes after the providers of what it requires. */
function startOrder(
  plugins: Plugin<unknown>[],
  providersOf: Map<symbol, Plugin<unknown>>,
  values: Map<symbol, unknown>,
): Plugin<unknown>[] {
  const order: Plugin<unknown>[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (plugin: Plugin<unknown>, path: string[]) => {
    const seen = state.get(plugin.id);
    if (seen === 'done') return;
    if (seen === 'visiting') {
      const cycle = [...path.slice(path.indexOf(plugin.id)), plugin.id];
      throw new WiringError(`dependency cycle between plugins: ${cycle.join(' -> ')}`);
    }
    state.set(plugin.id, 'visiting');
    for (const token of plugin.requires) {
      if (values.has(token)) continue;
      const provider = providersOf.get(token)!;
      if (provider !== plugin) visit(provider, [...path, plugin.id]);
    }
    state.set(plugin.id, 'done');
    order.push(plugin);
  };
  for (const plugin of plugins) visit(plugin, []);
  return order;
}

/**
 * A composed host: its own child container (nothing leaks through the global one), instances
 * created and started in dependency order, stopped in reverse. `stop` is idempotent and runs
 * every hook even when one fails.
 */
export class Host {
  private readonly container: DependencyContainer;
  private readonly started: { name: string; instance: Lifecycle }[] = [];
  private state: 'built' | 'starting' | 'started' | 'stopping' | 'stopped' = 'built';
  private stopping?: Promise<void>;

  constructor(
    private readonly order: Plugin<unknown>[],
    registrations: Map<symbol, { plugin: string; provider: Provider<unknown> }>,
    private readonly values: Map<symbol, unknown>,
  ) {
    this.container = rootContainer.createChildContainer();
    const resolve: Resolve = (token) => this.get(token);
    for (const [token, { provider }] of registrations) {
      if (values.has(token)) continue;
      if ('useValue' in provider) {
        this.container.register(token, { useValue: provider.useValue });
      } else if ('useFactory' in provider) {
        const factory = provider.useFactory;
        this.container.register(token, { useFactory: instanceCachingFactory(() => factory(resolve)) });
      } else {
        const cls = provider.useClass;
        this.container.register(token, {
          useFactory: instanceCachingFactory((c) => c.resolve(cls)),
        });
      }
    }
    for (const [token, value] of values) this.container.register(token, { useValue: value });
  }

  /** The instance for a token. Throws a WiringError naming the token when nothing provides it. */
  get<T>(token: Token<T>): T {
    if (!this.container.isRegistered(token, true)) {
      throw new WiringError(`nothing provides ${tokenName(token)} in this host`);
    }
    return this.container.resolve<T>(token);
  }

  has(token: Token<unknown>): boolean {
    return this.container.isRegistered(token, true);
  }

  /** Creates every provided instance and calls `start` on each, in dependency order. */
  async start(): Promise<void> {
    if (this.state !== 'built') throw new WiringError(`host cannot start: it is ${this.state}`);
    this.state = 'starting';
    try {
      for (const plugin of this.order) {
        for (const token of plugin.provides) {
          // A value given to the builder belongs to whoever made it (a test, another host):
          // this host neither starts nor stops it.
          if (this.values.has(token)) continue;
          const instance = this.get(token) as Lifecycle;
          if (this.started.some((s) => s.instance === instance)) continue;
          if (typeof instance?.start === 'function') await instance.start();
          this.started.push({ name: `${plugin.id} (${tokenName(token)})`, instance });
        }
      }
      this.state = 'started';
    } catch (error) {
      await this.stop().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Stops what was started, in reverse order. A failing hook does not prevent the others; the
   * failures are reported together once all hooks ran. Calling stop again returns the same result.
   */
  stop(): Promise<void> {
    this.stopping ??= this.stopAll();
    return this.stopping;
  }

  private async stopAll(): Promise<void> {
    this.state = 'stopping';
    const failures: Error[] = [];
    for (const { name, instance } of [...this.started].reverse()) {
      try {
        if (typeof instance?.stop === 'function') await instance.stop();
      } catch (error) {
        failures.push(new Error(`stopping ${name} failed: ${(error as Error).message}`, { cause: error }));
      }
    }
    this.started.length = 0;
    this.container.clearInstances();
    this.state = 'stopped';
    if (failures.length > 0) {
      throw new AggregateError(failures, failures.map((f) => f.message).join('; '));
    }
  }
}

export function createHost(defaults: readonly PluginUse[] = []): HostBuilder {
  return new HostBuilder(defaults);
}
