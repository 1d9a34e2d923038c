import test from 'ava';
import { durationMs } from '@baton/cli/internal/arguments.js';
import { ExitCode } from '@baton/cli/internal/exit-codes.js';
import { runBaton, spawnBaton } from './run-baton.js';

test('a duration takes a unit, or a plain number in the flag\'s own unit', (t) => {
  const timeout = durationMs('s');
  const interval = durationMs('ms', 10);
  t.is(timeout('30'), 30_000, '--timeout: a plain number is seconds, as before');
  t.is(timeout('0.3'), 300);
  t.is(interval('250'), 250, '--interval: a plain number is milliseconds, as before');
  t.is(timeout('500ms'), 500);
  t.is(interval('30s'), 30_000);
  t.is(timeout('2m'), 120_000);
  t.is(timeout('1m30s'), 90_000);
  t.is(timeout('1h'), 3_600_000);
  for (const bad of ['', 'ten', '5x', '-1', '1.5.2s', 's'])
    t.throws(() => timeout(bad), undefined, `${JSON.stringify(bad)} is refused`);
  t.throws(() => interval('5ms'), { message: /at least 10 ms/ });
});

test('bad durations are usage errors (exit 2) naming the flag, before any request', async (t) => {
  const cases: string[][] = [
    ['streams', 'transfer', 'events', '--to', 'n2', '--timeout', 'soon'],
    ['streams', 'drain', 'n1', '--yes', '--interval', 'often'],
    ['status', '--timeout', '5y'],
    ['status', '--watch', 'fast'],
    ['authority', 'transfer', 'proj', '--from', 'east', '--to', 'west', '--reason', 'r', '--timeout', '1d'],
  ];
  for (const args of cases) {
    const run = await runBaton(args, { cwd: process.cwd(), env: { BATON_URL: 'http://127.0.0.1:1' } });
    t.is(run.code, ExitCode.Usage, `${args.join(' ')}: ${run.stderr}`);
    const flag = args[args.length - 2];
    t.regex(run.stderr, new RegExp(`option '(-w, )?${flag} .*' argument .* is invalid.*not a duration`), args.join(' '));
  }
});

test('--help says which unit a plain number is in', async (t) => {
  const transfer = await spawnBaton(['streams', 'transfer', '--help']);
  t.regex(transfer.stdout, /--timeout <duration>[\s\S]*a\s+plain\s+number is seconds/);
  t.regex(transfer.stdout, /--interval <duration>[\s\S]*a\s+plain\s+number is milliseconds/);
  const status = await spawnBaton(['status', '--help']);
  t.regex(status.stdout, /--timeout <duration>[\s\S]*a\s+plain\s+number is seconds/);
});
