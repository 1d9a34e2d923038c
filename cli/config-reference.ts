#!/usr/bin/env node
// Writes docs/configuration.md from the hosts' zod schemas: `npm run config-reference`.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { type Plugin, type HostConfigShape, keyTable } from '@baton/kernel';
import { authorityNodeConfigShape } from '@baton/host-authority-node';
import { streamNodeConfigShape } from '@baton/host-stream-node';

/** Where the reference is kept, in the source tree (this runs from cli/dist). */
export const CONFIG_REFERENCE = fileURLToPath(new URL('../../docs/configuration.md', import.meta.url));

const HOSTS: { title: string; entry: string; shape: HostConfigShape }[] = [
  { title: 'Stream node', entry: 'hosts/stream-node/dist/main.js', shape: streamNodeConfigShape() },
  { title: 'Authority node', entry: 'hosts/authority-node/dist/main.js', shape: authorityNodeConfigShape() },
];

/** The whole reference, as markdown: each host's keys and sections, then every plugin's options. */
export function configReference(): string {
  const plugins = new Map<string, Plugin<unknown>>();
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated from the zod schemas by `npm run config-reference`; do not edit by hand.',
    '     test/hosts/config-reference.test.ts fails when this file and the schemas disagree. -->',
    '',
    'Each host reads one JSON file (`node <entry> CONFIG.json`); any key can be overridden from the',
    'environment as `BATON__path__to__key=value` (the value parsed as JSON when it parses). A host',
    'reports every problem of its file at once, each by its dotted path.',
  ];
  for (const { title, entry, shape } of HOSTS) {
    lines.push('', `## ${title} (\`${entry}\`)`, '', '### Top-level keys', '', ...keyTable(shape.schema));
    for (const [section, schema] of Object.entries(shape.sections ?? {})) {
      lines.push('', `### \`${section}\``, '', ...keyTable(schema, section));
    }
    if (shape.choices?.length) {
      const ids = shape.catalog.ids();
      for (const id of ids) plugins.set(id, shape.catalog.plugin(id)!);
      lines.push(
        '',
        '### Plugin choices',
        '',
        `${shape.choices.map((c) => `\`${c}\``).join(', ')}: each \`{ "use": "<plugin id>", "options": { ... } }\`, the id one of`,
        `${ids.map((id) => `\`${id}\``).join(', ')} (each plugin's options are under "Plugin options").`,
      );
    }
  }
  lines.push('', '## Plugin options');
  for (const [id, plugin] of [...plugins].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push('', `### \`${id}\``, '', ...(plugin.description ? [plugin.description, ''] : []), ...keyTable(plugin.options, 'options'));
  }
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await writeFile(CONFIG_REFERENCE, configReference());
  console.log(`wrote ${CONFIG_REFERENCE}`);
}
