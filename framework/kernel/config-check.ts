import type { z } from 'zod';
import type { PluginCatalog } from './catalog.js';
import { readConfig, validateConfig, type LoadConfigOptions } from './config.js';
import { ConfigError } from './wiring-error.js';
import { formatIssues, issueList } from './zod-issues.js';

/** What a host's config file holds, section by section, as far as it can be checked up front. */
export interface HostConfigShape {
  /** The file as a whole: the host's own keys (dataDir, log...), each section's outline. */
  schema: z.ZodType;
  /** Sections that are one plugin's options as they stand (`node`): checked by that plugin's schema. */
  sections?: Readonly<Record<string, z.ZodType>>;
  /** Sections that choose a plugin by id (`consensus: {use, options}`): checked by the chosen plugin's schema. */
  choices?: readonly string[];
  catalog: PluginCatalog;
}

/**
 * Checks a whole host config and throws one ConfigError listing every problem found, each with
 * its dotted path, instead of stopping at the first section at fault: the file's own schema,
 * every plugin section, and the options of every plugin a choice names (or its unknown id).
 *
 * The host may fill in options before building (a Raft's member defaults to the node id), so a
 * plugin section's value the config leaves out is not reported missing here: what is given and
 * wrong is, and the build reports what is still missing once the defaults are in.
 */
export function checkHostConfig(shape: HostConfigShape, raw: unknown, source: string): void {
  const issues: z.core.$ZodIssue[] = [];
  const top = shape.schema.safeParse(raw);
  if (!top.success) issues.push(...top.error.issues);
  const file = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  for (const [section, schema] of Object.entries(shape.sections ?? {})) {
    issues.push(...givenAndWrong(schema, file[section], [section]));
  }
  for (const section of shape.choices ?? []) {
    const choice = file[section] as { use?: unknown; options?: unknown } | undefined;
    if (!choice || typeof choice !== 'object' || typeof choice.use !== 'string') continue;
    const plugin = shape.catalog.plugin(choice.use);
    if (!plugin) {
      issues.push({
        code: 'custom',
        path: [section, 'use'],
        message: `unknown plugin id ${JSON.stringify(choice.use)}; known ids: ${shape.catalog.ids().join(', ')}`,
        input: choice.use,
      } as z.core.$ZodIssue);
      continue;
    }
    issues.push(...givenAndWrong(plugin.options, choice.options ?? {}, [section, 'options']));
  }
  const unique = [...new Map(issues.map((i) => [`${i.path.join('.')}\u0000${i.message}`, i])).values()];
  if (unique.length > 0) {
    throw new ConfigError(
      `invalid configuration in ${source} (${unique.length} problem${unique.length === 1 ? '' : 's'}):\n${formatIssues(unique, '')}`,
      issueList(unique, ''),
    );
  }
}

/** The issues of `value` under `schema`, prefixed by `at`, leaving out values it does not give. */
function givenAndWrong(schema: z.ZodType, value: unknown, at: readonly PropertyKey[]): z.core.$ZodIssue[] {
  if (value === undefined || value === null || typeof value !== 'object') return [];
  const parsed = schema.safeParse(value);
  if (parsed.success) return [];
  return parsed.error.issues
    .filter((issue) => !(issue.code === 'invalid_type' && valueAt(value, issue.path) === undefined))
    .map((issue) => ({ ...issue, path: [...at, ...issue.path] }) as z.core.$ZodIssue);
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let at: unknown = root;
  for (const key of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = Object.hasOwn(at, key) ? (at as Record<PropertyKey, unknown>)[key] : undefined;
  }
  return at;
}

/** Reads a host's config file with its environment overrides, checks all of it, and validates it. */
export async function loadHostConfig<S extends z.ZodType>(
  shape: HostConfigShape & { schema: S },
  options: LoadConfigOptions,
): Promise<z.output<S>> {
  const raw = await readConfig(options);
  const source = options.file ?? 'config';
  checkHostConfig(shape, raw, source);
  return validateConfig(shape.schema, raw, source);
}
