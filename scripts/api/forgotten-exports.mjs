// Which of API Extractor's ae-forgotten-export warnings matter. A type that is not exported but
// that a public declaration names is a hole in the public surface: a consumer sees it and cannot
// name it. One reached only through @internal declarations (the engine parts an AuthorityNode
// holds for its tests) is no part of the public surface, and exporting it would only pull the
// rest of the engine's types after it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ts = require('typescript');

/**
 * @typedef {object} ForgottenReference
 * @property {string} symbol  the type not exported
 * @property {string} file    the source file that names it
 * @property {number} line    1-based
 * @property {number} column  1-based
 * @property {string} text    the warning as API Extractor words it
 */

/** The warnings among `references` that a public declaration reaches, directly or through other forgotten types. */
export function publiclyForgotten(references) {
  const forgotten = new Set(references.map((r) => r.symbol));
  const sources = new Map();
  const sourceOf = (file) => {
    if (!sources.has(file)) {
      sources.set(file, ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true));
    }
    return sources.get(file);
  };
  // symbol -> the contexts it is named from: 'public', 'internal' or another forgotten symbol.
  const namedFrom = new Map();
  for (const reference of references) {
    const context = contextOf(sourceOf(reference.file), reference.line, reference.column, forgotten);
    if (!namedFrom.has(reference.symbol)) namedFrom.set(reference.symbol, []);
    namedFrom.get(reference.symbol).push({ context, reference });
  }
  const matters = new Set();
  let grew = true;
  while (grew) {
    grew = false;
    for (const [symbol, uses] of namedFrom) {
      if (matters.has(symbol)) continue;
      if (uses.some(({ context }) => context === 'public' || matters.has(context))) {
        matters.add(symbol);
        grew = true;
      }
    }
  }
  return references.filter((r) => {
    if (!matters.has(r.symbol)) return false;
    const context = namedFrom.get(r.symbol).find((u) => u.reference === r).context;
    return context === 'public' || matters.has(context);
  });
}

/**
 * Where a reference sits: 'internal' inside a declaration tagged @internal, the name of the
 * forgotten declaration that holds it, else 'public' (an exported declaration).
 */
function contextOf(source, line, column, forgotten) {
  const position = source.getPositionOfLineAndCharacter(line - 1, column - 1);
  let node = innermost(source, position);
  let topLevel;
  for (; node && node !== source; node = node.parent) {
    if (ts.getJSDocTags(node).some((tag) => tag.tagName.text === 'internal')) return 'internal';
    if (node.parent === source) topLevel = node;
  }
  const name = topLevel && declaredName(topLevel);
  return name && forgotten.has(name) ? name : 'public';
}

function innermost(source, position) {
  let found = source;
  const visit = (node) => {
    if (position >= node.getStart(source) && position < node.getEnd()) {
      found = node;
      ts.forEachChild(node, visit);
    }
  };
  ts.forEachChild(source, visit);
  return found;
}

function declaredName(statement) {
  if (ts.isVariableStatement(statement)) {
    const [first] = statement.declarationList.declarations;
    return first && ts.isIdentifier(first.name) ? first.name.text : undefined;
  }
  return statement.name && ts.isIdentifier(statement.name) ? statement.name.text : undefined;
}
