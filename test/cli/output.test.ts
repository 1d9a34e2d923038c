import test from 'ava';
import { FailedError, UnreachableError, UsageError } from '@baton/cli/internal/cli-errors.js';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { Output, toCliError } from '@baton/cli/internal/output.js';
import { BatonError } from '@baton/contracts/internal/errors.js';
import { WiringError } from '@baton/kernel/internal/wiring-error.js';
import { bufferSink } from './run-baton.js';

test('human output renders the result as lines on stdout; notes go to stderr', (t) => {
  const stdout = bufferSink();
  const stderr = bufferSink();
  const output = new Output(false, stdout, stderr);
  output.result({ n: 2 }, (data) => [`n is ${data.n}`, 'done']);
  output.note('working...');
  t.is(stdout.text, 'n is 2\ndone\n');
  t.is(stderr.text, 'working...\n');
});

test('JSON output is exactly one JSON document on stdout, and notes are silent', (t) => {
  const stdout = bufferSink();
  const stderr = bufferSink();
  const output = new Output(true, stdout, stderr);
  output.result({ n: 2, list: ['a'] }, () => 'never rendered');
  output.note('working...');
  t.deepEqual(JSON.parse(stdout.text), { n: 2, list: ['a'] });
  t.is(stderr.text, '');
});

test('errors are one line for a person and a JSON object for a script, both on stderr', (t) => {
  const human = bufferSink();
  new Output(false, bufferSink(), human).error(
    new UnreachableError('http://127.0.0.1:1', 'connection refused'),
  );
  t.is(human.text, 'baton: cannot reach http://127.0.0.1:1: connection refused\n');
  const script = bufferSink();
  new Output(true, bufferSink(), script).error(new UsageError('bad flag'));
  t.deepEqual(JSON.parse(script.text), {
    error: { code: 'usage', message: 'bad flag', exitCode: 2 },
  });
});

test("Baton's own errors keep their code and message and exit 1", (t) => {
  const error = toCliError(new WiringError('nothing provides baton.Clock'));
  t.true(error instanceof FailedError);
  t.is(error.code, 'wiring');
  t.is(error.message, 'nothing provides baton.Clock');
  t.is(error.exitCode, ExitCode.Failed);
  t.is(toCliError(new BatonError('store_unavailable', 'x')).code, 'store_unavailable');
});

test('a CLI error passes through; anything else is an unexpected error with the debug hint', (t) => {
  const usage = new UsageError('u');
  t.is(toCliError(usage), usage);
  const unexpected = toCliError(new TypeError('x is undefined'));
  t.is(unexpected.code, 'internal');
  t.is(unexpected.exitCode, ExitCode.Failed);
  t.regex(unexpected.message, /unexpected error: x is undefined.*BATON_DEBUG=1/);
  t.regex(toCliError('a string').message, /a string/);
});
