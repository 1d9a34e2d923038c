import { Option, type Command } from 'commander';
import { outputFor, type CliContext } from '../context.js';
import { generateHost } from '../scaffold/generate-host.js';
import { generatePlugin, type GeneratedProject } from '../scaffold/generate-plugin.js';
import { HOST_VARIANTS, allSlots } from '../scaffold/host-variants.js';
import { PLUGIN_CONTRACTS, availableContracts } from '../scaffold/plugin-contracts.js';
import { TerminalPrompt } from '../scaffold/prompt.js';

/** `baton new host NAME` and `baton new plugin NAME --contract C`: projects from templates/. */
export function registerNew(program: Command, ctx: CliContext): void {
  const group = program
    .command('new')
    .description('generate a new host or plugin project from a template (never overwrites a file)');

  const host = group
    .command('host')
    .description(
      'generate a host: a variant composed with the plugins you choose, its config, a start script and a passing test',
    )
    .argument(
      '<name>',
      'package and directory name: lowercase words joined by dashes, e.g. acme-node',
    )
    .addOption(
      new Option(
        '--variant <variant>',
        'the variant the host runs (asked when omitted on a terminal)',
      ).choices(HOST_VARIANTS.map((v) => v.name)),
    );
  for (const slot of allSlots()) {
    const bySlot = HOST_VARIANTS.flatMap((v) =>
      v.slots.filter((s) => s.key === slot.key).map((s) => ({ variant: v.name, slot: s })),
    );
    const variants = bySlot.map((b) => b.variant);
    // A flag several variants share may default differently in each: say so per variant.
    const defaults = new Set(bySlot.map((b) => b.slot.defaultChoice));
    const defaultText =
      defaults.size === 1
        ? slot.defaultChoice
        : bySlot.map((b) => `${b.slot.defaultChoice} (${b.variant})`).join(', ');
    host.addOption(
      new Option(
        `${slot.flag} <plugin>`,
        `${slot.label} (${variants.join(', ')}): ${slot.choices.map((c) => c.key).join(', ')}; default ${defaultText}`,
      ),
    );
  }
  host
    .option('--dir <path>', 'directory to generate into (default: ./NAME)')
    .option(
      '--baton <range>',
      'the version range the generated package.json asks for every @baton/* package (default: ^ this version)',
    )
    .option('-y, --yes', 'take the defaults for every choice not given, without asking')
    .addHelpText(
      'after',
      `
Choices not given as flags are asked when stdin is a terminal; otherwise (or with --yes) the
defaults apply. Plugins by variant:
${HOST_VARIANTS.map((v) => `  ${v.name}: ${v.unavailable ? `not available yet (${v.unavailable})` : v.slots.map((s) => `${s.flag} ${s.choices.map((c) => c.key).join('|')}`).join('  ')}`).join('\n')}

Example:
  baton new host acme-node --variant authority --audit-store redis --identity npm`,
    )
    .action(
      async (
        name: string,
        options: Record<string, string | boolean | undefined>,
        command: Command,
      ) => {
        const output = outputFor(ctx, command);
        const interactive = ctx.stdin.isTTY === true && options.yes !== true && !output.machine;
        const prompt = interactive ? new TerminalPrompt(ctx.stdin, ctx.stderr) : undefined;
        const project = await generateHost(ctx.pkg, {
          name,
          variant: options.variant as string | undefined,
          choices: Object.fromEntries(
            allSlots().map((slot) => [slot.key, options[slot.key] as string | undefined]),
          ),
          ask: prompt ? (questions) => prompt.ask(questions) : undefined,
          takeDefaults: options.yes === true,
          dir: options.dir as string | undefined,
          batonDependency: options.baton as string | undefined,
          cwd: ctx.cwd,
        }).finally(() => prompt?.close());
        report(output, project);
      },
    );

  const available = new Set(availableContracts(ctx.pkg).map((c) => c.name));
  group
    .command('plugin')
    .description(
      'generate a plugin for one contract, with its conformance suite wired in (failing until implemented)',
    )
    .argument(
      '<name>',
      'package, directory and plugin id: lowercase words joined by dashes, e.g. acme-store',
    )
    .addOption(
      new Option(
        '--contract <contract>',
        'the contract the plugin implements',
      ).makeOptionMandatory(),
    )
    .option(
      '--example',
      'identity-supplier only: a supplier implemented for a trivial ecosystem, whose tests pass',
    )
    .option('--dir <path>', 'directory to generate into (default: ./NAME)')
    .option(
      '--baton <range>',
      'the version range the generated package.json asks for every @baton/* package (default: ^ this version)',
    )
    .addHelpText(
      'after',
      `
Contracts:
${PLUGIN_CONTRACTS.filter((c) => available.has(c.name)).map((c) => `  ${c.name.padEnd(18)} ${c.title}: ${c.summary}`).join('\n')}
A contract is offered when its template and its conformance suite both exist.${unavailableLine(available)}

The generated tests fail until the plugin is implemented: the suite lists, one test per rule,
what the contract expects (the generated README says so).

Example:
  baton new plugin acme-store --contract object-store`,
    )
    .action(
      async (
        name: string,
        options: { contract: string; example?: boolean; dir?: string; baton?: string },
        command: Command,
      ) => {
        const output = outputFor(ctx, command);
        const project = await generatePlugin(ctx.pkg, {
          name,
          contract: options.contract,
          example: options.example === true,
          dir: options.dir,
          batonDependency: options.baton,
          cwd: ctx.cwd,
        });
        report(output, project);
      },
    );
}

/** The contracts a plugin cannot be generated for yet, named so nobody asks for them in vain. */
function unavailableLine(available: ReadonlySet<string>): string {
  const missing = PLUGIN_CONTRACTS.filter((c) => !available.has(c.name)).map((c) => c.name);
  return missing.length === 0 ? '' : `\nNot available yet (no plugin template): ${missing.join(', ')}.`;
}

function report(output: ReturnType<typeof outputFor>, project: GeneratedProject): void {
  output.result(project, (p) => [
    `Created ${p.kind} ${p.name} in ${p.dir} (${p.files.length} files):`,
    ...p.files.map((file) => `  ${file}`),
    '',
    'Next steps:',
    ...p.nextSteps.map((step) => `  ${step}`),
    '',
    `The first "npm test" should ${p.firstTestRun}.`,
  ]);
}
