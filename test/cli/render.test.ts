import test from 'ava';
import { outputPath, renderTemplate } from '@baton/cli/internal/scaffold/render.js';

test('placeholders are filled, with or without spaces inside the braces', (t) => {
  t.is(
    renderTemplate(
      'class {{className}} {} // {{ name }}',
      { className: 'Acme', name: 'acme' },
      'x',
    ),
    'class Acme {} // acme',
  );
});

test('the json and ts filters keep a value with quotes and backslashes inside its string', (t) => {
  const values = { description: `the member's "audit" \\ trail\nnext` };
  const json = renderTemplate('{"d": {{description | json}}}', values, 'package.json');
  t.is(JSON.parse(json).d, values.description);
  const ts = renderTemplate('const d = {{ description | ts }};', values, 'plugin.ts');
  t.is(ts, `const d = 'the member\\'s "audit" \\\\ trail\\nnext';`);
  // The literal evaluates back to the value.
  t.is(new Function(`return ${ts.slice('const d = '.length, -1)};`)(), values.description);
});

test('a placeholder without a value names the template and the placeholder', (t) => {
  const error = t.throws(() => renderTemplate('{{missing}}', {}, 'templates/plugin/files/x.ts'));
  t.is(
    error!.message,
    'template templates/plugin/files/x.ts uses {{missing}}, which the generator does not define',
  );
});

test('an unknown filter is a template defect, named', (t) => {
  const error = t.throws(() => renderTemplate('{{name | yaml}}', { name: 'a' }, 'f'));
  t.regex(error!.message, /unknown filter "yaml" on \{\{name\}\}/);
});

test('gitignore template files become .gitignore, in any directory', (t) => {
  t.is(outputPath('gitignore'), '.gitignore');
  t.is(outputPath('sub/gitignore'), 'sub/.gitignore');
  t.is(outputPath('src/gitignore.ts'), 'src/gitignore.ts');
});
