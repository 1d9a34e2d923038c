/**
 * How a value is written where it lands: `{{name | json}}` as a JSON string (package.json),
 * `{{name | ts}}` as a single-quoted TypeScript string literal. A value holding a quote or a
 * backslash then cannot break the file it is written into.
 */
const FILTERS: Record<string, (value: string) => string> = {
  json: (value) => JSON.stringify(value),
  ts: (value) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`,
};

/**
 * Fills `{{name}}` placeholders in a template text (file contents and file paths alike), with
 * an optional filter (`{{name | json}}`). A placeholder without a value, or an unknown filter,
 * is a defect of the template, reported with the template's path, so a generated project never
 * ships with a literal `{{...}}` in it.
 */
export function renderTemplate(
  text: string,
  values: Readonly<Record<string, string>>,
  where: string,
): string {
  return text.replace(
    /\{\{\s*([A-Za-z][A-Za-z0-9]*)\s*(?:\|\s*([a-z]+)\s*)?\}\}/g,
    (_match, key: string, filter: string | undefined) => {
      const value = values[key];
      if (value === undefined) {
        throw new Error(`template ${where} uses {{${key}}}, which the generator does not define`);
      }
      if (filter === undefined) return value;
      const apply = FILTERS[filter];
      if (!apply)
        throw new Error(`template ${where} uses the unknown filter "${filter}" on {{${key}}}`);
      return apply(value);
    },
  );
}

/**
 * Template sources are kept under names npm and tooling leave alone: `gitignore` becomes
 * `.gitignore` (npm would drop a real .gitignore from a published package).
 */
export function outputPath(templatePath: string): string {
  return templatePath
    .split('/')
    .map((segment) => (segment === 'gitignore' ? '.gitignore' : segment))
    .join('/');
}
