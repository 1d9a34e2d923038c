import { randomBytes } from 'node:crypto';
import { join, relative, resolve } from 'node:path';
import { FailedError, UsageError } from '../cli-errors.js';
import type { BatonPackage } from './baton-package.js';
import { withBatonDependencies } from './baton-dependencies.js';
import { batonRange, dependencyVersions, type GeneratedProject } from './generate-plugin.js';
import { HOST_VARIANTS, type HostPluginChoice, type HostVariant } from './host-variants.js';
import { pascalCase, validateName } from './names.js';
import type { Question } from './prompt.js';
import { renderLayers } from './template-files.js';
import { writeProject } from './write-project.js';

export interface NewHostRequest {
  name: string;
  variant?: string;
  /** Plugin choices by slot key (`auditStore: 'redis'`), as given by flags. */
  choices: Record<string, string | undefined>;
  /** Asks the user for what the flags left out; absent when stdin is not a terminal (defaults apply). */
  ask?: (questions: Question[]) => Promise<string[]>;
  /** --yes: take the default the prompt would show for anything the flags left out, the variant too. */
  takeDefaults?: boolean;
  dir?: string;
  batonDependency?: string;
  cwd: string;
}

export async function generateHost(
  pkg: BatonPackage,
  request: NewHostRequest,
): Promise<GeneratedProject> {
  const name = validateName('host', request.name);
  const variant = await chooseVariant(request);
  if (variant.unavailable)
    throw new FailedError(
      'not_available',
      `cannot generate a ${variant.name} host: ${variant.unavailable}`,
    );
  const chosen = await choosePlugins(variant, request);

  const dir = resolve(request.cwd, request.dir ?? name);
  const imports = new Map<string, string[]>();
  for (const { choice } of chosen)
    imports.set(choice.importFrom, [...(imports.get(choice.importFrom) ?? []), choice.exportName]);
  const adminToken = randomBytes(18).toString('base64url');
  const config = {
    node: variant.nodeConfig(adminToken),
    ...variant.fixedConfig,
    ...Object.fromEntries(chosen.map(({ slot, choice }) => [slot, choice.config])),
    log: { level: 'info' },
  };
  const values: Record<string, string> = {
    ...dependencyVersions(pkg),
    name,
    className: pascalCase(name),
    variant: variant.name,
    description: `Baton ${variant.name} host ${name}: ${variant.summary}.`,
    adminToken,
    configJson: JSON.stringify(config, null, 2),
    pluginImports: [...imports]
      .map(([from, names]) => `import { ${[...new Set(names)].sort().join(', ')} } from '${from}';`)
      .join('\n'),
    choicesList: chosen
      .map(({ label, choice }) => `- ${label}: \`${choice.key}\`, ${choice.summary}`)
      .join('\n'),
    choiceFlags: chosen.map(({ flag, choice }) => `${flag} ${choice.key}`).join(' '),
  };
  const helpers = ['redisUrl', 'tempDir'].filter((helper) =>
    chosen.some(({ choice }) => choice.testOptions.includes(`${helper}(`)),
  );
  values.testHelperImport =
    helpers.length > 0 ? `import { ${helpers.join(', ')} } from './support.js';\n` : '';
  // For a template whose test already imports other helpers from support.ts.
  values.testHelperNames = helpers.map((helper) => `, ${helper}`).join('');
  for (const { slot, choice } of chosen) {
    values[`${slot}Plugin`] = choice.exportName;
    values[`${slot}TestOptions`] = choice.testOptions;
  }
  const layers = [
    join(pkg.templates, 'host', 'files', 'common'),
    join(pkg.templates, 'host', 'files', variant.name),
  ];
  // config/host.json (and any file that repeats the token) is a secret of its owner.
  const rendered = (await renderLayers(layers, values)).map((file) => (file.content.includes(adminToken) ? { ...file, private: true } : file));
  const files = await writeProject(dir, withBatonDependencies(rendered, batonRange(pkg, request.batonDependency)));
  const where = relative(request.cwd, dir) || '.';
  return {
    kind: 'host',
    name,
    variant: variant.name,
    plugins: Object.fromEntries(chosen.map(({ slot, choice }) => [slot, choice.key])),
    dir,
    files,
    firstTestRun: 'pass',
    nextSteps: [`cd ${where}`, 'npm install', 'npm test', 'npm start'],
  };
}

async function chooseVariant(request: NewHostRequest): Promise<HostVariant> {
  const names = HOST_VARIANTS.map((v) => v.name);
  let wanted = request.variant;
  const defaultVariant = HOST_VARIANTS.find((v) => !v.unavailable)?.name ?? names[0];
  if (wanted === undefined && request.takeDefaults) wanted = defaultVariant;
  if (wanted === undefined) {
    if (!request.ask)
      throw new UsageError(
        `give the variant with --variant (${names.join(' or ')}), or --yes for the default (${defaultVariant})`,
      );
    [wanted] = await request.ask([
      {
        label: 'variant',
        choices: HOST_VARIANTS.map((v) => ({
          key: v.name,
          summary: v.unavailable ? `${v.summary} (not available yet)` : v.summary,
        })),
        defaultChoice: defaultVariant,
      },
    ]);
  }
  const variant = HOST_VARIANTS.find((v) => v.name === wanted);
  if (!variant)
    throw new UsageError(`unknown variant ${JSON.stringify(wanted)}: choose ${names.join(' or ')}`);
  return variant;
}

interface Chosen {
  slot: string;
  flag: string;
  label: string;
  choice: HostPluginChoice;
}

async function choosePlugins(variant: HostVariant, request: NewHostRequest): Promise<Chosen[]> {
  const slotKeys = new Set(variant.slots.map((s) => s.key));
  for (const [key, value] of Object.entries(request.choices)) {
    if (value !== undefined && !slotKeys.has(key)) {
      const flag = `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      throw new UsageError(
        `${flag} does not apply to the ${variant.name} variant, which chooses ${variant.slots.map((s) => s.flag).join(', ')}`,
      );
    }
  }
  for (const slot of variant.slots) {
    const given = request.choices[slot.key];
    if (given !== undefined && !slot.choices.some((c) => c.key === given)) {
      throw new UsageError(
        `${slot.flag} ${JSON.stringify(given)} is not one of the ${slot.label} plugins of the ${variant.name} variant: choose one of ${slot.choices.map((c) => c.key).join(', ')}`,
      );
    }
  }
  // Only real choices are asked: a slot with a single plugin takes it.
  const missing = variant.slots.filter(
    (s) => request.choices[s.key] === undefined && s.choices.length > 1,
  );
  const answers =
    request.ask && missing.length > 0
      ? await request.ask(
          missing.map((s) => ({
            label: s.label,
            choices: s.choices,
            defaultChoice: s.defaultChoice,
          })),
        )
      : [];
  return variant.slots.map((slot) => {
    const asked = missing.indexOf(slot);
    const key =
      request.choices[slot.key] ?? (asked >= 0 ? answers[asked] : undefined) ?? slot.defaultChoice;
    return {
      slot: slot.key,
      flag: slot.flag,
      label: slot.label,
      choice: slot.choices.find((c) => c.key === key)!,
    };
  });
}
