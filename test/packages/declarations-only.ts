import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { run, type Run } from './processes.js';
import { CHECKOUT } from './workspaces.js';

/** A plugin as its author starts one: the contract from @baton/contracts, definePlugin from @baton/kernel. */
const PLUGIN_SOURCE = `import { definePlugin } from '@baton/kernel';
import { AUDIT_STORE, type AuditStore } from '@baton/contracts';
import { z } from 'zod';

class NothingKept implements AuditStore {
  async put() {
    return { created: true };
  }
  async byId() {
    return undefined;
  }
  async latest() {
    return undefined;
  }
  async list() {
    return [];
  }
}

export const nothingKeptPlugin = definePlugin({
  id: 'nothing-kept',
  provides: [AUDIT_STORE],
  options: z.object({}).strict(),
  register: (ctx) => ctx.provide(AUDIT_STORE, { useFactory: () => new NothingKept() }),
});
`;

export interface Compilation extends Run {
  /** Every file in the program, as \`tsc --listFiles\` lists them. */
  files: string[];
}

/**
 * Writes plugin.ts into `project` (where the packages are installed) and type-checks it with
 * this checkout's TypeScript: strict, NodeNext, the libraries' declarations checked too
 * (skipLibCheck off). Node's types come from this checkout, as a plugin project has its own
 * @types/node.
 */
export async function compilePluginAgainstInstall(project: string): Promise<Compilation> {
  await writeFile(join(project, 'plugin.ts'), PLUGIN_SOURCE);
  await writeFile(
    join(project, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: {
          strict: true,
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          lib: ['ES2023'],
          typeRoots: [join(CHECKOUT, 'node_modules/@types')],
          types: ['node'],
          skipLibCheck: false,
          noEmit: true,
        },
        files: ['plugin.ts'],
      },
      null,
      2,
    ),
  );
  const compiled = await run(
    process.execPath,
    [join(CHECKOUT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--listFiles'],
    {
      cwd: project,
      timeoutMs: 120_000,
    },
  );
  const files = compiled.stdout.split('\n').filter((line) => line.startsWith('/'));
  return { ...compiled, files };
}
