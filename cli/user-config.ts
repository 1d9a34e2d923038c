import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FailedError, UsageError } from './cli-errors.js';
import { writePrivateFile } from './local-cluster/private-files.js';

/**
 * One cluster the CLI can talk to without flags: where (`url`), the file whose first line is
 * the bearer token, and a CA to trust for it. `dataDir` is set for a context `baton up` made.
 */
export interface NamedContext {
  url: string;
  tokenFile?: string;
  caFile?: string;
  dataDir?: string;
}

/** `<config dir>/baton/config.json`: the contexts by name, and the one in use. */
export interface UserConfig {
  current?: string;
  contexts: Record<string, NamedContext>;
}

/**
 * The user's config directory as the XDG base directory spec has it: $XDG_CONFIG_HOME, else
 * ~/.config. Undefined when the environment names neither (no home: no contexts).
 */
export function configDir(env: NodeJS.ProcessEnv): string | undefined {
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'baton');
  if (env.HOME) return join(env.HOME, '.config', 'baton');
  return undefined;
}

export function configPath(env: NodeJS.ProcessEnv): string | undefined {
  const dir = configDir(env);
  return dir && join(dir, 'config.json');
}

/** The config file, or an empty one when there is none yet. A file that is not a config is an error naming it. */
export async function readUserConfig(env: NodeJS.ProcessEnv): Promise<UserConfig> {
  const path = configPath(env);
  if (!path) return { contexts: {} };
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { contexts: {} };
    throw new FailedError('config_unreadable', `cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    const parsed = JSON.parse(text) as Partial<UserConfig>;
    if (!parsed || typeof parsed !== 'object' || (parsed.contexts !== undefined && typeof parsed.contexts !== 'object')) throw new Error('not an object with "contexts"');
    return { ...(typeof parsed.current === 'string' ? { current: parsed.current } : {}), contexts: parsed.contexts ?? {} };
  } catch (error) {
    throw new FailedError('config_invalid', `${path} is not a baton config (${(error as Error).message}): fix it or remove it`, { cause: error });
  }
}

/** Writes the config 0600 (its neighbours are token files), replacing the old one whole. */
export async function writeUserConfig(env: NodeJS.ProcessEnv, config: UserConfig): Promise<string> {
  const path = configPath(env);
  if (!path) throw new FailedError('no_config_dir', 'neither XDG_CONFIG_HOME nor HOME is set: there is no config directory to keep contexts in');
  await writePrivateFile(path, `${JSON.stringify(config, null, 2)}\n`);
  return path;
}

/** Where `baton up` keeps the token of the context it writes: 0600, the token on the first line. */
export function tokenFileFor(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const dir = configDir(env);
  return dir && join(dir, 'tokens', `${name}.token`);
}

/** The context a command uses: the one --context names, else the current one, else none. */
export async function selectedContext(env: NodeJS.ProcessEnv, named: string | undefined): Promise<{ name: string; context: NamedContext } | undefined> {
  const config = await readUserConfig(env);
  const name = named ?? config.current;
  if (name === undefined) return undefined;
  const context = config.contexts[name];
  if (!context) {
    const known = Object.keys(config.contexts);
    if (named === undefined) return undefined;
    throw new UsageError(
      `--context ${name}: no such context${known.length > 0 ? `; the contexts are ${known.join(', ')}` : ' (there are none yet: "baton up" adds one)'}`,
    );
  }
  return { name, context };
}

/** The first line of a token file, as the bearer token; an unreadable or empty file is an error naming it and who named it. */
export async function readTokenFile(path: string, from: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new FailedError('token_file_unreadable', `${from} ${path}: cannot read it (${(error as Error).message})`, { cause: error });
  }
  const token = text.split(/\r?\n/, 1)[0]?.trim() ?? '';
  if (token === '') throw new FailedError('token_file_empty', `${from} ${path} is empty: put the token on its first line`);
  return token;
}

/** What `baton up` records of the cluster it started. */
export interface UpContext {
  variant: 'stream' | 'authority';
  /** The data dir as given (default `.baton/data`): a default one names the context after the variant. */
  dataDirOption: string;
  /** The variant's data dir, absolute: the context of a restart is the one that names it. */
  dataDir: string;
  isDefaultDataDir: boolean;
  url: string;
  token: string;
  caFile?: string;
}

/** The context `baton up` wrote: its name, and what it was named after. */
export interface SavedUpContext {
  name: string;
  namedAfter: 'variant' | 'data dir';
  tokenFile: string;
  configFile: string;
}

/**
 * Adds (or, for the same data dir, updates) the context of a cluster `baton up` runs and makes
 * it current. It is named after the variant for the default data dir, else after the data
 * dir's last part (with "-authority" for that variant); a name another data dir took already
 * gets "-2", "-3"... The token goes to its own file, 0600, which the context names.
 */
export async function saveUpContext(env: NodeJS.ProcessEnv, up: UpContext): Promise<SavedUpContext | undefined> {
  if (!configDir(env)) return undefined;
  const config = await readUserConfig(env);
  const ownName = Object.entries(config.contexts).find(([, c]) => c.dataDir === up.dataDir)?.[0];
  const base = up.isDefaultDataDir
    ? up.variant
    : `${sanitize(lastPart(up.dataDirOption))}${up.variant === 'authority' ? '-authority' : ''}`;
  let name = ownName ?? base;
  for (let n = 2; !ownName && config.contexts[name] && config.contexts[name].dataDir !== up.dataDir; n += 1) name = `${base}-${n}`;
  const tokenFile = tokenFileFor(env, name)!;
  await writePrivateFile(tokenFile, `${up.token}\n`);
  config.contexts[name] = { url: up.url, tokenFile, ...(up.caFile ? { caFile: up.caFile } : {}), dataDir: up.dataDir };
  config.current = name;
  const configFile = await writeUserConfig(env, config);
  return { name, namedAfter: up.isDefaultDataDir ? 'variant' : 'data dir', tokenFile, configFile };
}

function lastPart(path: string): string {
  return path.replace(/[/\\]+$/, '').split(/[/\\]/).pop() || 'cluster';
}

/** A context name a shell and a file name take as is. */
function sanitize(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+/, '') || 'cluster';
}
