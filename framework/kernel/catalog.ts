import { z } from 'zod';
import type { PluginUse } from './host.js';
import type { Plugin } from './plugin.js';
import { WiringError } from './wiring-error.js';

/** How a config file names a plugin to use: its id and its options. */
export const pluginChoiceSchema = z.object({
  use: z.string().min(1),
  options: z.record(z.string(), z.unknown()).optional(),
});
export type PluginChoice = z.infer<typeof pluginChoiceSchema>;

/**
 * The plugins a host knows by id, so a config file can choose among them. A choice naming an id
 * the catalog does not hold fails with the config path and the ids that would have worked.
 */
export class PluginCatalog {
  private readonly byId = new Map<string, Plugin<any>>();

  constructor(plugins: readonly Plugin<any>[]) {
    for (const plugin of plugins) {
      if (this.byId.has(plugin.id)) throw new WiringError(`plugin id ${plugin.id} appears twice in the catalog`);
      this.byId.set(plugin.id, plugin);
    }
  }

  /** The plugin with this id, if the catalog holds one. */
  plugin(id: string): Plugin<any> | undefined {
    return this.byId.get(id);
  }

  ids(): string[] {
    return [...this.byId.keys()].sort();
  }

  resolve(choices: readonly PluginChoice[], configPath = 'plugins'): PluginUse[] {
    return choices.map((choice, i) => {
      const plugin = this.byId.get(choice.use);
      if (!plugin) {
        throw new WiringError(
          `${configPath}[${i}].use: unknown plugin id ${JSON.stringify(choice.use)}; known ids: ${this.ids().join(', ')}`,
        );
      }
      return { plugin, options: choice.options ?? {}, configPath: `${configPath}[${i}].options` };
    });
  }
}
