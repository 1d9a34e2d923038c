import { createInterface } from 'node:readline';
import { UsageError } from '../cli-errors.js';

export interface Question {
  label: string;
  choices: readonly { key: string; summary: string }[];
  defaultChoice: string;
}

const ATTEMPTS = 3;

/**
 * Asks questions on a terminal, one line per answer: Enter takes the default, an unknown answer
 * is asked again (three tries), and input that ends before every question is answered fails
 * naming the question, so a script never hangs on a prompt. One prompt reads its input through
 * one line reader for its whole life: a second reader would miss what the first had buffered.
 */
export class TerminalPrompt {
  private readonly lines: AsyncIterator<string>;

  constructor(
    private readonly input: NodeJS.ReadableStream,
    private readonly output: { write(text: string): unknown },
  ) {
    this.lines = createInterface({ input, terminal: false, crlfDelay: Infinity })[
      Symbol.asyncIterator
    ]();
  }

  async ask(questions: readonly Question[]): Promise<string[]> {
    const answers: string[] = [];
    for (const question of questions) {
      this.output.write(`\n${question.label}:\n`);
      for (const choice of question.choices)
        this.output.write(`  ${choice.key.padEnd(14)} ${choice.summary}\n`);
      answers.push(await askOne(question, this.lines, this.output));
    }
    return answers;
  }

  /**
   * Stops reading the input, so the process can exit. Closing the line reader is not enough on
   * a terminal: the TTY handle would stay open and keep Node waiting for input nobody types, so
   * it is paused and no longer holds the process up.
   */
  async close(): Promise<void> {
    await this.lines.return?.();
    this.input.pause();
    (this.input as { unref?: () => void }).unref?.();
  }
}

/** Asks `questions` once, then stops reading. */
export async function askChoices(
  questions: readonly Question[],
  input: NodeJS.ReadableStream,
  output: { write(text: string): unknown },
): Promise<string[]> {
  const prompt = new TerminalPrompt(input, output);
  try {
    return await prompt.ask(questions);
  } finally {
    await prompt.close();
  }
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
