import { UsageError } from '../cli-errors.js';

const NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const MAX_NAME_LENGTH = 50;
/** Names that would shadow Baton itself or Node's own modules in the generated package. */
const RESERVED = new Set(['baton', 'node', 'test', 'node-modules']);

/**
 * A host or plugin name becomes the npm package name, the directory, the plugin id and (in
 * PascalCase) the class name, so it must be valid as all four: lowercase letters and digits in
 * dash-separated words, starting with a letter.
 */
export function validateName(kind: 'host' | 'plugin', raw: string): string {
  const example = kind === 'host' ? 'acme-node' : 'acme-store';
  if (raw.length === 0)
    throw new UsageError(`the ${kind} name is empty: give one such as ${example}`);
  if (raw.length > MAX_NAME_LENGTH) {
    throw new UsageError(
      `the ${kind} name is ${raw.length} characters long: keep it to ${MAX_NAME_LENGTH}`,
    );
  }
  if (!NAME.test(raw)) {
    throw new UsageError(
      `invalid ${kind} name ${JSON.stringify(raw)}: use lowercase letters and digits in words joined by single dashes, ` +
        `starting with a letter (e.g. ${example})`,
    );
  }
  if (RESERVED.has(raw))
    throw new UsageError(`the ${kind} name ${JSON.stringify(raw)} is reserved: choose another`);
  return raw;
}

/** `acme-object-store` -> `AcmeObjectStore`. */
export function pascalCase(name: string): string {
  return name
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}

/** `acme-object-store` -> `acmeObjectStore`. */
export function camelCase(name: string): string {
  const pascal = pascalCase(name);
  return pascal.charAt(0).toLowerCase() + pascal.slice(1);
}
