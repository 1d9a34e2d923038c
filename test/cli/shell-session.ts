import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { BATON_MAIN } from './run-baton.js';

/** One command of a session, with what it wrote (stdout and stderr together) and its exit code. */
export interface ShellStep {
  command: string;
  code: number;
  output: string;
}

const MARK = '@@baton-step-end';

/**
 * Runs `commands` one after another in one `sh`, as a person types them into one terminal: an
 * `export` holds for the commands after it. `baton` is on the PATH, as `npm link` puts it there.
 * No command stops the session; each one's exit code is reported.
 */
export async function runShellSession(
  commands: readonly string[],
  options: { cwd: string },
): Promise<ShellStep[]> {
  // Outside `cwd`, which may be the checkout: the shim names this worktree's entry point.
  const bin = await mkdtemp(join(tmpdir(), 'baton-bin-'));
  try {
    return await runWithBatonAt(bin, commands, options.cwd);
  } finally {
    await rm(bin, { recursive: true, force: true });
  }
}

async function runWithBatonAt(bin: string, commands: readonly string[], cwd: string): Promise<ShellStep[]> {
  const baton = join(bin, 'baton');
  await writeFile(baton, `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(BATON_MAIN)} "$@"\n`);
  await chmod(baton, 0o755);
  const script = [
    'exec 2>&1',
    ...commands.flatMap((command, i) => [command, `printf '\\n${MARK} %d %d\\n' ${i} "$?"`]),
  ].join('\n');
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn('sh', ['-c', script], {
      cwd,
      env: {
        ...process.env,
        PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
        BATON_DEBUG: '',
        BATON_URL: '',
        BATON_TOKEN: '',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    child.on('error', reject);
    child.on('close', () => resolve(text));
  });
  const steps: ShellStep[] = [];
  let rest = output;
  for (const command of commands) {
    const match = new RegExp(`\\n${MARK} (\\d+) (\\d+)\\n`).exec(rest);
    if (!match) throw new Error(`the session ended before "${command}" finished:\n${rest}`);
    steps.push({ command, code: Number(match[2]), output: rest.slice(0, match.index) });
    rest = rest.slice(match.index + match[0].length);
  }
  return steps;
}

function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
