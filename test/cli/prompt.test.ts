import { PassThrough } from 'node:stream';
import test from 'ava';
import { UsageError } from '@baton/cli/internal/cli-errors.js';
import { askChoices, type Question } from '@baton/cli/internal/scaffold/prompt.js';
import { bufferSink } from './run-baton.js';

const store: Question = {
  label: 'audit store',
  choices: [
    { key: 'fs', summary: 'files' },
    { key: 'redis', summary: 'Redis' },
  ],
  defaultChoice: 'fs',
};
const identity: Question = {
  label: 'identity supplier',
  choices: [
    { key: 'opaque', summary: 'any text' },
    { key: 'npm', summary: 'npm names' },
  ],
  defaultChoice: 'opaque',
};

function typed(text: string): PassThrough {
  const input = new PassThrough();
  input.end(text);
  return input;
}

test('each question lists its choices and takes the typed answer', async (t) => {
  const output = bufferSink();
  t.deepEqual(await askChoices([store, identity], typed('redis\nnpm\n'), output), ['redis', 'npm']);
  t.regex(output.text, /audit store:\n {2}fs\s+files\n {2}redis\s+Redis\naudit store \[fs\]: /);
  t.regex(output.text, /identity supplier \[opaque\]: /);
});

test('Enter takes the default', async (t) => {
  t.deepEqual(await askChoices([store, identity], typed('\n  \n'), bufferSink()), ['fs', 'opaque']);
});

test('an unknown answer is asked again, saying what is valid', async (t) => {
  const output = bufferSink();
  t.deepEqual(await askChoices([store], typed('mongo\nredis\n'), output), ['redis']);
  t.regex(output.text, /"mongo" is not one of fs, redis/);
});

test('three wrong answers fail as a usage error listing the choices', async (t) => {
  const error = await t.throwsAsync(askChoices([store], typed('a\nb\nc\nfs\n'), bufferSink()), {
    instanceOf: UsageError,
  });
  t.regex(error!.message, /audit store after 3 tries: choose one of fs, redis/);
});

test('input that ends before an answer fails naming the question instead of hanging', async (t) => {
  const error = await t.throwsAsync(askChoices([store, identity], typed('redis\n'), bufferSink()), {
    instanceOf: UsageError,
  });
  t.regex(error!.message, /no answer for the identity supplier: input ended/);
});
