import { z } from 'zod';

/** A JSON Schema node as z.toJSONSchema writes it (the parts the reference reads). */
interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  default?: unknown;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  $ref?: string;
}

/** The JSON Schema a config value is read against: the input side, so defaults show as optional. */
export function configJsonSchema(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
}

/**
 * A markdown table of every key under `schema`, one row per key with its dotted path (prefixed
 * by `at`), type, default and description; nested objects, array items and the variants of a
 * union are walked, so a key deep in the config has its own row.
 *
 * @internal
 */
export function keyTable(schema: z.ZodType, at = ''): string[] {
  const rows: string[][] = [];
  walk(configJsonSchema(schema), at, rows, true);
  if (rows.length === 0) return ['No options.'];
  return [
    '| Key | Type | Default | Description |',
    '| --- | --- | --- | --- |',
    ...rows.map((cells) => `| ${cells.map(cell).join(' | ')} |`),
  ];
}

function walk(node: JsonSchema, path: string, rows: string[][], root = false, required = false, note = ''): void {
  const variants = node.anyOf ?? node.oneOf;
  if (!root) {
    const description = [note, node.description ?? '', required && node.default === undefined ? '**required**' : '']
      .filter(Boolean)
      .join(' ');
    rows.push([`\`${path}\``, typeOf(node), node.default === undefined ? '' : `\`${JSON.stringify(node.default)}\``, description]);
  }
  if (node.properties) {
    for (const [key, child] of Object.entries(node.properties)) {
      walk(child, path ? `${path}.${key}` : key, rows, false, node.required?.includes(key) ?? false);
    }
  }
  if (node.items && (node.items.properties || node.items.anyOf || node.items.oneOf)) walk(node.items, `${path}[]`, rows, true);
  if (typeof node.additionalProperties === 'object' && (node.additionalProperties.properties || node.additionalProperties.anyOf)) {
    walk(node.additionalProperties, `${path}.<name>`, rows, true);
  }
  if (variants) {
    // A discriminated union: its tag once, with every value it takes.
    const tagName = discriminator(variants);
    if (tagName) {
      const values = variants.map((v) => JSON.stringify(v.properties![tagName].const ?? v.properties![tagName].enum![0]));
      rows.push([`\`${path ? `${path}.${tagName}` : tagName}\``, values.join(' \\| '), '', 'which variant the keys below follow']);
    }
    for (const variant of variants) {
      if (!variant.properties) continue;
      // A discriminated union: each variant's keys, said under which variant they apply.
      const tag = Object.entries(variant.properties).find(([, p]) => p.const !== undefined || p.enum?.length === 1);
      const when = tag ? `(when \`${tag[0]}\` is \`${JSON.stringify(tag[1].const ?? tag[1].enum![0])}\`)` : '(one variant)';
      for (const [key, child] of Object.entries(variant.properties)) {
        if (tag && key === tag[0]) continue;
        walk(child, path ? `${path}.${key}` : key, rows, false, variant.required?.includes(key) ?? false, when);
      }
    }
  }
}

/** The key every variant fixes to one value (`kind`), if the union has one. */
function discriminator(variants: readonly JsonSchema[]): string | undefined {
  const first = variants[0]?.properties;
  if (!first) return undefined;
  return Object.keys(first).find((key) =>
    variants.every((v) => {
      const p = v.properties?.[key];
      return p !== undefined && (p.const !== undefined || p.enum?.length === 1);
    }),
  );
}

function typeOf(node: JsonSchema): string {
  if (node.$ref) return 'see above';
  if (node.const !== undefined) return JSON.stringify(node.const);
  if (node.enum) return node.enum.map((v) => JSON.stringify(v)).join(' \\| ');
  const variants = node.anyOf ?? node.oneOf;
  if (variants) return [...new Set(variants.map(typeOf))].join(' \\| ');
  const type = Array.isArray(node.type) ? node.type.join(' \\| ') : (node.type ?? 'any');
  if (type === 'array') return `${node.items ? typeOf(node.items) : 'any'}[]`;
  if (type === 'object' && typeof node.additionalProperties === 'object' && !node.properties) {
    return `map of ${typeOf(node.additionalProperties)}`;
  }
  const bounds = [
    node.minimum !== undefined ? `>= ${node.minimum}` : '',
    node.exclusiveMinimum !== undefined ? `> ${node.exclusiveMinimum}` : '',
    node.maximum !== undefined && node.maximum < Number.MAX_SAFE_INTEGER ? `<= ${node.maximum}` : '',
    node.minLength !== undefined && node.minLength > 0 ? `length >= ${node.minLength}` : '',
    node.maxLength !== undefined ? `length <= ${node.maxLength}` : '',
    node.format ? node.format : '',
  ].filter(Boolean);
  return bounds.length > 0 ? `${type} (${bounds.join(', ')})` : type;
}

/** A table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\r?\n/g, ' ').replace(/(?<!\\)\|/g, '\\|');
}
