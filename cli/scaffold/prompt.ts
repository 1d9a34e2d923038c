import { createInterface } from 'node:readline';
import { UsageError } from '../cli-errors.js';

export interface Question {
  label: string;
  choices: readonly { key: string; summary: string }[];
  defaultChoice: string;
}

const ATTEMPTS = 3;

/**
 * Asks each question on a terminal, one line per answer: Enter takes the default, an unknown
 * answer is asked again (three tries), and input that ends before every question is answered
 * fails naming the question, so a script never hangs on a prompt.
 */
export async function askChoices(
  questions: readonly Question[],
  input: NodeJS.ReadableStream,
  output: { write(text: string): unknown },
): Promise<string[]> {
  const lines = createInterface({ input, terminal: false, crlfDelay: Infinity })[
    Symbol.asyncIterator
  ]();
  const answers: string[] = [];
  try {
    for (const question of questions) {
      output.write(`\n${question.label}:\n`);
      for (const choice of question.choices)
        output.write(`  ${choice.key.padEnd(14)} ${choice.summary}\n`);
      answers.push(await askOne(question, lines, output));
    }
  } finally {
    await lines.return?.();
  }
  return answers;
}

async function askOne(
  question: Question,
  lines: AsyncIterator<string>,
  output: { write(text: string): unknown },
): Promise<string> {
  const keys = question.choices.map((c) => c.key);
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    output.write(`${question.label} [${question.defaultChoice}]: `);
    const next = await lines.next();
    if (next.done) throw new UsageError(`no answer for the ${question.label}: input ended`);
    const answer = next.value.trim();
    if (answer === '') return question.defaultChoice;
    if (keys.includes(answer)) return answer;
    output.write(`${JSON.stringify(answer)} is not one of ${keys.join(', ')}\n`);
  }
  throw new UsageError(
    `no valid answer for the ${question.label} after ${ATTEMPTS} tries: choose one of ${keys.join(', ')}`,
  );
}
