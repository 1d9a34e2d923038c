import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import test from 'ava';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Written by every build of the CLI package: unchanged means nothing was built. */
const CLI_BUILD_INFO = `${ROOT}cli/dist/.tsbuildinfo`;

function npmStart(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [`${ROOT}scripts/start.mjs`, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

test('npm start checks its arguments with the last build before building: a refused start builds nothing', async (t) => {
  const before = (await stat(CLI_BUILD_INFO)).mtimeMs;
  const refused = await npmStart(['--variant', 'bogus']);
  t.is(refused.code, 2, refused.stderr);
  t.regex(refused.stderr, /argument 'bogus' is invalid\. Allowed choices are stream, authority/);
  t.regex(refused.stderr, /checked with the last build/);
  const badPort = await npmStart(['--base-port', 'x']);
  t.is(badPort.code, 2, badPort.stderr);
  t.is((await stat(CLI_BUILD_INFO)).mtimeMs, before, 'no build ran');
});
