import { CommanderError } from 'commander';
import { UsageError } from './cli-errors.js';
import type { CliContext } from './context.js';
import { ExitCode } from './exit-codes.js';
import { OUTPUT_FORMATS, Output, toCliError, type OutputFormat } from './output.js';
import { buildProgram } from './program.js';

/**
 * Runs `baton` with the given arguments (without `node` and the script) and returns the exit
 * code instead of exiting, so the whole command can be driven in-process as well.
 */
export async function runCli(argv: readonly string[], ctx: CliContext): Promise<number> {
  const program = buildProgram(ctx);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return ExitCode.Ok;
  } catch (thrown) {
    const output = new Output(formatIn(argv), ctx.stdout, ctx.stderr);
    if (thrown instanceof CommanderError) {
      // --help and --version end parsing through here too, with exit code 0.
      if (thrown.exitCode === 0) return ExitCode.Ok;
      // A group run without its subcommand (`baton new`): commander has shown the group's help.
      if (thrown.code === 'commander.help') return ExitCode.Usage;
      const message = thrown.message.replace(/^error: /, '');
      output.error(new UsageError(`${message} (run "${helpCommand(program, argv)}" for usage)`));
      return ExitCode.Usage;
    }
    const error = toCliError(thrown);
    output.error(error);
    if (ctx.env.BATON_DEBUG && thrown instanceof Error && thrown.stack)
      ctx.stderr.write(`${thrown.stack}\n`);
    return error.exitCode;
  }
}

/** `baton new plugin --help` for `baton new plugin x --bad`: the deepest command named in argv. */
function helpCommand(program: ReturnType<typeof buildProgram>, argv: readonly string[]): string {
  const path = ['baton'];
  let command = program;
  for (const word of argv) {
    if (word.startsWith('-')) continue;
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!sub) break;
    path.push(word);
    command = sub;
  }
  return `${path.join(' ')} --help`;
}

/** The output format argv asks for (`-o F`, `-oF`, `--output F`, `--output=F`, `--json`), for reporting an error in it. */
function formatIn(argv: readonly string[]): OutputFormat {
  let format: OutputFormat = 'table';
  const known = (value: string | undefined) => OUTPUT_FORMATS.find((f) => f === value);
  argv.forEach((word, i) => {
    if (word === '--json') format = 'json';
    const value =
      word === '-o' || word === '--output'
        ? argv[i + 1]
        : word.startsWith('--output=')
          ? word.slice('--output='.length)
          : /^-o[a-z]/.test(word)
            ? word.slice(2)
            : undefined;
    format = known(value) ?? format;
  });
  return format;
}
