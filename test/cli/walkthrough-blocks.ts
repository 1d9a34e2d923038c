import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** The README at the root of the checkout (tests run from dist/test/cli). */
export const README = fileURLToPath(new URL('../../../README.md', import.meta.url));

/** One command of a walkthrough: what to type, the exit code it states, the lines it shows. */
export interface WalkthroughStep {
  command: string;
  /** 0 unless the line ends with `# exit N`. */
  code: number;
  /** Lines the command must print, in order; `...` in one stands for any text. */
  expected: string[];
}

/**
 * The `sh` block that follows `<!-- walkthrough: NAME -->` in the README, as steps: a line
 * `$ command` starts a step, a `#` line is a comment for the reader, any other line is output
 * the command shows.
 */
export async function readWalkthrough(name: string, file = README): Promise<WalkthroughStep[]> {
  const text = await readFile(file, 'utf8');
  const marker = `<!-- walkthrough: ${name} -->\n\`\`\`sh\n`;
  const start = text.indexOf(marker);
  if (start < 0) throw new Error(`${file} has no walkthrough "${name}" (${marker.trim()})`);
  const body = text.slice(start + marker.length, text.indexOf('\n```', start + marker.length));
  const steps: WalkthroughStep[] = [];
  for (const line of body.split('\n')) {
    if (line.startsWith('$ ')) {
      const command = line.slice(2).trim();
      const exit = /\s#\s*exit (\d+)\s*$/.exec(command);
      steps.push({ command, code: exit ? Number(exit[1]) : 0, expected: [] });
    } else if (line.trim() !== '' && !line.startsWith('#')) {
      const step = steps.at(-1);
      if (!step) throw new Error(`walkthrough "${name}": output before any command: ${line}`);
      step.expected.push(line);
    }
  }
  return steps;
}

/**
 * The expected lines `output` lacks: each must match a whole line of it, in order, with runs of
 * spaces and tabs counting as one space and `...` as any text.
 */
export function missingLines(expected: readonly string[], output: string): string[] {
  const lines = output.split('\n').map(normalise);
  const missing: string[] = [];
  let at = 0;
  for (const line of expected) {
    const pattern = new RegExp(
      `^${normalise(line)
        .split('...')
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
    const found = lines.findIndex((candidate, i) => i >= at && pattern.test(candidate));
    if (found < 0) missing.push(line);
    else at = found + 1;
  }
  return missing;
}

function normalise(line: string): string {
  return line.trim().replace(/\s+/g, ' ');
}
