import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A generated plugin as a host imports it: the package name and what its index exports. */
export interface AuditPlugin {
  packageName: string;
  pluginConst: string;
}

/** Replaces `anchor` in the file, which must hold it: a template that changed fails here, by name. */
async function edit(file: string, anchor: string, replacement: string): Promise<void> {
  const text = await readFile(file, 'utf8');
  if (!text.includes(anchor))
    throw new Error(`${file} no longer contains ${JSON.stringify(anchor)}: update this edit`);
  await writeFile(file, text.replace(anchor, replacement));
}

/**
 * What a team does to add its own AuditStore plugin to a generated stream host: a config section
 * for it, a line in the composition, and (here) the start script saying which store the host
 * resolved, so a test can see it wired. The stream node projects its audit trail into it.
 */
export async function wireAuditPlugin(hostDir: string, plugin: AuditPlugin): Promise<void> {
  await edit(
    join(hostDir, 'src/config.ts'),
    '    objectStore: pluginOptions,\n',
    '    objectStore: pluginOptions,\n    /** The AuditStore plugin of this team. */\n    auditStore: pluginOptions,\n',
  );
  await edit(
    join(hostDir, 'src/host.ts'),
    "import type { HostConfig } from './config.js';\n",
    `import { ${plugin.pluginConst} } from '${plugin.packageName}';\nimport type { HostConfig } from './config.js';\n`,
  );
  await edit(
    join(hostDir, 'src/host.ts'),
    "    .add(streamNodePlugin, config.node, 'node');",
    `    .add(${plugin.pluginConst}, config.auditStore, 'auditStore')\n    .add(streamNodePlugin, config.node, 'node');`,
  );
  await edit(
    join(hostDir, 'src/main.ts'),
    "import { STREAM_NODE } from '@baton/stream-transfer';\n",
    "import { AUDIT_STORE } from '@baton/contracts';\nimport { STREAM_NODE } from '@baton/stream-transfer';\n",
  );
  await edit(
    join(hostDir, 'src/main.ts'),
    'runStartScript((host) => `stream API ${host.get(STREAM_NODE).url}`);',
    'runStartScript((host) => `stream API ${host.get(STREAM_NODE).url}, audit store ${host.get(AUDIT_STORE).constructor.name}`);',
  );
}
