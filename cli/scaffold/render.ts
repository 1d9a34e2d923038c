/**
 * Fills `{{name}}` placeholders in a template text (file contents and file paths alike). A
 * placeholder without a value is a defect of the template, reported with the template's path,
 * so a generated project never ships with a literal `{{...}}` in it.
 */
export function renderTemplate(
  text: string,
  values: Readonly<Record<string, string>>,
  where: string,
): string {
  return text.replace(/\{\{\s*([A-Za-z][A-Za-z0-9]*)\s*\}\}/g, (_match, key: string) => {
    const value = values[key];
    if (value === undefined) {
      throw new Error(`template ${where} uses {{${key}}}, which the generator does not define`);
    }
    return value;
  });
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
