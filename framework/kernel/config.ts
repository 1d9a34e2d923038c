import { readFile } from 'node:fs/promises';
import type { z } from 'zod';
import { ConfigError } from './wiring-error.js';
import { formatIssues, issueList } from './zod-issues.js';

export interface LoadConfigOptions {
  /** Path of a JSON file; omitted means "start from an empty object". */
  file?: string;
  /** Environment to read overrides from (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /**
   * Variables named `${prefix}a__b__c` override the config value at path a.b.c (numeric segments
   * index arrays). Values are parsed as JSON when they parse, else taken as strings, so
   * `BATON__http__port=8080` is a number and `BATON__node__id=n1` a string.
   */
  envPrefix?: string;
}

/** Reads a JSON config file, applies environment overrides, and validates the result. */
export async function loadConfig<S extends z.ZodType>(
  schema: S,
  options: LoadConfigOptions = {},
): Promise<z.output<S>> {
  return validateConfig(schema, await readConfig(options), options.file ?? 'config');
}

/** The config as written: the JSON file (or `{}`) with the environment overrides applied, unchecked. */
export async function readConfig(options: LoadConfigOptions = {}): Promise<unknown> {
  let raw: unknown = {};
  if (options.file) {
    let text: string;
    try {
      text = await readFile(options.file, 'utf8');
    } catch (error) {
      throw new ConfigError(`cannot read config file ${options.file}: ${(error as Error).message}`);
    }
    try {
      raw = JSON.parse(text);
    } catch (error) {
      throw new ConfigError(`config file ${options.file} is not valid JSON: ${(error as Error).message}`);
    }
  }
  return applyEnvOverrides(raw, options.env ?? process.env, options.envPrefix ?? 'BATON__');
}

export function validateConfig<S extends z.ZodType>(schema: S, raw: unknown, source: string): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(
      `invalid configuration in ${source}:\n${formatIssues(parsed.error.issues, '')}`,
      issueList(parsed.error.issues, ''),
    );
  }
  return parsed.data;
}

export function applyEnvOverrides(raw: unknown, env: NodeJS.ProcessEnv, prefix: string): unknown {
  const root = (raw && typeof raw === 'object' ? structuredClone(raw) : {}) as Record<string, unknown>;
  const names = Object.keys(env)
    .filter((name) => name.startsWith(prefix) && name.length > prefix.length)
    .sort();
  for (const name of names) {
    const path = name.slice(prefix.length).split('__');
    if (path.some((segment) => segment === '')) {
      throw new ConfigError(`environment variable ${name} has an empty path segment`);
    }
    let node: Record<string, unknown> = root;
    for (const segment of path.slice(0, -1)) {
      const next = node[segment];
      if (next === undefined || next === null) node[segment] = {};
      else if (typeof next !== 'object') {
        throw new ConfigError(`environment variable ${name} overrides inside ${segment}, which is not an object`);
      }
      node = node[segment] as Record<string, unknown>;
    }
    node[path[path.length - 1]] = parseValue(env[name] ?? '');
  }
  return root;
}

function parseValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
