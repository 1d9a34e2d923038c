// Lint rules of the project. The one that matters most: code under framework/ and plugins/
// never reads time, randomness or raw timers directly, so the simulation harness can drive them
// through the injected Clock and Rng. Only the system implementations of those contracts may.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const noAmbientTimeOrRandomness = [
  'error',
  { object: 'Math', property: 'random', message: 'Use the injected Rng (framework/contracts/rng.ts).' },
  { object: 'Date', property: 'now', message: 'Use the injected Clock (framework/contracts/clock.ts).' },
];
const noRawTimers = [
  'error',
  { name: 'setTimeout', message: 'Use the injected Clock: timers must be driven by the simulation.' },
  { name: 'setInterval', message: 'Use the injected Clock: timers must be driven by the simulation.' },
  { name: 'setImmediate', message: 'Use the injected Clock: timers must be driven by the simulation.' },
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'templates/**/files/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['framework/**/*.ts', 'plugins/**/*.ts'],
    ignores: ['**/system-clock.ts', '**/system-rng.ts'],
    rules: {
      'no-restricted-properties': noAmbientTimeOrRandomness,
      'no-restricted-globals': noRawTimers,
    },
  },
);
