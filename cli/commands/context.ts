import type { Command } from 'commander';
import { FailedError, UsageError } from '../cli-errors.js';
import { outputFor, type CliContext } from '../context.js';
import { table } from '../table.js';
import { configPath, readUserConfig, writeUserConfig, type NamedContext } from '../user-config.js';

interface ListedContext extends NamedContext {
  name: string;
  current: boolean;
}

/**
 * `baton context list|use|show`: the named clusters of the user's config file, like kubectl's
 * contexts or rpk's profiles, so commands need neither --url nor a token on the command line.
 */
export function registerContext(program: Command, ctx: CliContext): void {
  const group = program
    .command('context')
    .description('list, show and switch the named clusters commands talk to without --url or --token')
    .addHelpText(
      'after',
      `
Contexts live in $XDG_CONFIG_HOME/baton/config.json (else ~/.config/baton/config.json), each
with a url, a tokenFile (the token on its first line, 0600) and a caFile to trust. "baton up"
adds or updates the context of the cluster it starts and makes it current.

A command takes its address and token from flags (--url, --token, --token-file, --cacert) first,
then BATON_URL / BATON_TOKEN, then the context (--context NAME, else the current one). A
context's token and CA are only used for the context's own address.

Examples:
  baton context list
  baton context use authority
  baton context show
  baton --context stream streams list`,
    );

  group
    .command('list')
    .description('the contexts, the current one marked with *')
    .action(async (_options: unknown, command: Command) => {
      const output = outputFor(ctx, command);
      const config = await readUserConfig(ctx.env);
      const contexts: ListedContext[] = Object.entries(config.contexts).map(([name, c]) => ({ name, current: name === config.current, ...c }));
      output.result({ current: config.current ?? null, contexts }, (r, view) =>
        r.contexts.length === 0
          ? `no contexts in ${configPath(ctx.env) ?? 'the config directory'}: "baton up" adds one`
          : table(
              ['CURRENT', 'NAME', 'URL', ...(view.wide ? ['TOKEN FILE', 'CA FILE', 'DATA DIR'] : [])],
              r.contexts.map((c) => [c.current ? '*' : '', c.name, c.url, ...(view.wide ? [c.tokenFile ?? '-', c.caFile ?? '-', c.dataDir ?? '-'] : [])]),
              view,
            ),
      );
    });

  group
    .command('use')
    .description('make a context the current one')
    .argument('<name>', 'the context')
    .action(async (name: string, _options: unknown, command: Command) => {
      const output = outputFor(ctx, command);
      const config = await readUserConfig(ctx.env);
      if (!config.contexts[name]) {
        const known = Object.keys(config.contexts);
        throw new UsageError(`no context ${name}${known.length > 0 ? `: the contexts are ${known.join(', ')}` : ': there are none yet ("baton up" adds one)'}`);
      }
      config.current = name;
      await writeUserConfig(ctx.env, config);
      output.result({ current: name, ...config.contexts[name] }, (c) => `now using context ${c.current} (${c.url})`);
    });

  group
    .command('show')
    .description('the current context (or the one named): url, token file, CA file')
    .argument('[name]', 'the context (default: --context, else the current one)')
    .action(async (named: string | undefined, _options: unknown, command: Command) => {
      const output = outputFor(ctx, command);
      const config = await readUserConfig(ctx.env);
      const name = named ?? command.optsWithGlobals<{ context?: string }>().context ?? config.current;
      if (name === undefined) throw new FailedError('no_context', 'no context is current: "baton up" adds one, "baton context use NAME" picks one');
      const context = config.contexts[name];
      if (!context) throw new UsageError(`no context ${name}: the contexts are ${Object.keys(config.contexts).join(', ') || 'none'}`);
      const shown: ListedContext = { name, current: name === config.current, ...context };
      output.result(shown, (c) => [
        `context ${c.name}${c.current ? ' (current)' : ''}`,
        `  url         ${c.url}`,
        `  token file  ${c.tokenFile ?? '-'}`,
        `  CA file     ${c.caFile ?? '-'}`,
        ...(c.dataDir ? [`  data dir    ${c.dataDir}`] : []),
      ]);
    });
}
