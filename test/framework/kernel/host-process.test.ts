import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';

const main = (host: string) =>
  fileURLToPath(new URL(`../../../../hosts/${host}/dist/main.js`, import.meta.url));

/** A host's entry point as a supervisor runs it; `whenListening` resolves on its first line. */
function run(t: ExecutionContext, host: string, args: readonly string[]) {
  const child = spawn(process.execPath, [main(host), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let listening: (line: string) => void = () => undefined;
  const whenListening = new Promise<string>((resolve) => (listening = resolve));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (stdout.includes('\n')) listening(stdout.split('\n')[0]);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return { child, whenListening, exited, stderr: () => stderr };
}

async function tempDir(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-host-process-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('without a config file a host process prints its usage and exits 2', async (t) => {
  for (const [host, name] of [
    ['stream-node', 'stream node'],
    ['authority-node', 'authority node'],
  ]) {
    const started = run(t, host, []);
    t.is(await started.exited, 2, host);
    t.regex(
      started.stderr(),
      new RegExp(
        `^usage: node hosts/${host}/dist/main.js CONFIG.json \\(the ${name} config file\\)`,
      ),
    );
  }
});

test('a config file that cannot be read makes the process exit 1 saying why', async (t) => {
  const dir = await tempDir(t);
  const started = run(t, 'authority-node', [join(dir, 'missing.json')]);
  t.is(await started.exited, 1);
  t.regex(started.stderr(), /^authority node failed to start: .*missing\.json/);
});

test('an authority node process says where it listens, and SIGINT then SIGTERM stop it once, exiting 0', async (t) => {
  t.timeout(60_000);
  const dir = await tempDir(t);
  const file = join(dir, 'config.json');
  await writeFile(
    file,
    JSON.stringify({
      node: {
        self: 'east-1',
        roster: { east: { members: { 'east-1': { public: 'http://127.0.0.1:9' } } } },
        public: { port: 0 },
        control: { port: 0 },
      },
      dataDir: null,
      log: { level: 'silent' },
    }),
  );
  const started = run(t, 'authority-node', [file]);
  const line = await Promise.race([
    started.whenListening,
    started.exited.then((code) => `exited ${code}: ${started.stderr()}`),
  ]);
  t.regex(
    line,
    /^authority node listening on http:\/\/127\.0\.0\.1:\d+ \(public\), http:\/\/127\.0\.0\.1:\d+ \(control\)$/,
  );
  const control = /(http:\/\/127\.0\.0\.1:\d+) \(control\)/.exec(line)![1];
  t.is((await fetch(`${control}/openapi.json`)).status, 200, 'the control listener answers');
  // Ctrl-C reaches the whole process group and a supervisor may signal as well.
  started.child.kill('SIGINT');
  started.child.kill('SIGTERM');
  t.is(await started.exited, 0, started.stderr());
  t.is(started.stderr(), '');
});
