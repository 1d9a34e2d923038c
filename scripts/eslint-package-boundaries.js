// An ESLint rule that keeps Baton's packages apart: a module may import another package only by
// its name and its public exports (`@baton/kernel`, never `../kernel/host.js` and never
// `@baton/kernel/internal/host.js`). The internal/* exports exist for Baton's own tests and
// benchmarks, which are no package; a package that used them would break for every consumer,
// who does not set the baton-internal condition.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import process from 'node:process';

/** The folder of the package `file` belongs to: the nearest directory above it with a package.json. */
function packageRoot(file) {
  let dir = dirname(file);
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

const rule = {
  meta: {
    type: 'problem',
    docs: { description: 'packages import each other only by name and public exports' },
    messages: {
      relative: "'{{spec}}' reaches into {{other}}, another package: import it by its name ({{name}}) and its public exports",
      internal: "'{{spec}}' is an internal module of {{name}}: packages use each other's public exports only",
    },
    schema: [],
  },
  create(context) {
    const file = context.filename;
    const own = packageRoot(file);
    const check = (node) => {
      const spec = node.source && node.source.value;
      if (typeof spec !== 'string') return;
      if (/^@baton\/[^/]+\/internal\//.test(spec)) {
        context.report({ node: node.source, messageId: 'internal', data: { spec, name: spec.split('/').slice(0, 2).join('/') } });
        return;
      }
      if (!spec.startsWith('.') || !own) return;
      const target = resolve(dirname(file), spec);
      const inside = relative(own, target);
      if (inside.startsWith('..' + sep) || inside === '..') {
        const other = packageRoot(target) ?? dirname(target);
        let name = relative(process.cwd(), other);
        try {
          name = JSON.parse(readFileSync(join(other, 'package.json'), 'utf8')).name ?? name;
        } catch {
          // No package.json there: the message names the folder.
        }
        context.report({ node: node.source, messageId: 'relative', data: { spec, other: relative(process.cwd(), other), name } });
      }
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

export const packageBoundaries = { rules: { 'package-boundaries': rule } };
