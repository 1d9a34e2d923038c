// `npm run client-types`: writes the OpenAPI documents (write-openapi.mjs), then the types of
// @baton/client generated from them into framework/client/generated/.
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import process from 'node:process';
import { CLIENT_DOCUMENTS, clientTypes } from './client-types.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const documents = join(root, 'dist', 'openapi');
execFileSync(process.execPath, [join(root, 'scripts', 'write-openapi.mjs'), documents], { stdio: ['ignore', 'ignore', 'inherit'] });
for (const name of CLIENT_DOCUMENTS) {
  const file = join(root, 'framework', 'client', 'generated', `${name}.ts`);
  await writeFile(file, await clientTypes(documents, name));
  process.stdout.write(`${file}\n`);
}
