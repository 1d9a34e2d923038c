// Lint rules of the project. The one that matters most: code under framework/ and plugins/
// never reads time, randomness or raw timers directly, so the simulation harness can drive them
// through the injected Clock and Rng. Only the system implementations of those contracts may.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { packageBoundaries } from './scripts/eslint-package-boundaries.js';

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

// Durable files are written one way, through framework/kernel/durable-files.ts over the
// FileSystem seam (the crash-consistency harness records that seam). Elsewhere node:fs may only
// be read: a rename, link, create or write by hand would bypass both the fsync rules and the
// harness. Namespace and default imports are refused too, since they would reach every call.
const fsReads = [
  'readFile', 'readFileSync', 'readdir', 'readdirSync', 'stat', 'statSync', 'lstat', 'lstatSync',
  'access', 'accessSync', 'existsSync', 'realpath', 'realpathSync', 'constants', 'createReadStream',
];
const noHandWrittenFiles = [
  'error',
  ...['node:fs', 'node:fs/promises', 'fs', 'fs/promises'].map((name) => ({
    name,
    allowImportNames: fsReads,
    allowTypeImports: true,
    message: 'Write files through framework/kernel/durable-files.ts (DurableFiles), so they are fsynced in the right order and the crash-consistency harness sees them.',
  })),
];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'templates/**/files/**'] },
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
    // The system implementations of Clock and Rng; and the client's retry delay, which runs in a
    // caller's process outside any host (its clients take a `sleep` to replace it).
    ignores: ['**/system-clock.ts', '**/system-rng.ts', 'framework/client/client-timers.ts'],
    rules: {
      'no-restricted-properties': noAmbientTimeOrRandomness,
      'no-restricted-globals': noRawTimers,
    },
  },
  {
    files: ['framework/**/*.ts', 'plugins/**/*.ts', 'hosts/**/*.ts', 'cli/**/*.ts'],
    ignores: [
      // The seam's node:fs implementation: the one place the calls are made.
      'framework/kernel/file-system.ts',
      // A lock file matters only while its holder runs; after a power cut a stale lock is taken over.
      'framework/kernel/directory-lock.ts',
      // Test support (temp dirs, spawned servers, the crash harness materialising crash states): nothing durable.
      'framework/testing/**',
      'framework/conformance/servers/**',
      // Build output of the dashboard bundle.
      'framework/dashboard/build-dashboard.ts',
      // Writes a generated reference document into the source tree.
      'cli/config-reference.ts',
      // Writes a new project for a user (`baton new`), once, refusing to overwrite.
      'cli/scaffold/write-project.ts',
      // A child process's log file, appended by the child's stdout.
      'cli/local-cluster/node-process.ts',
      // openssl writes keys and certificates itself; this narrows their modes and removes openssl's scratch input.
      'cli/local-cluster/cluster-certificates.ts',
    ],
    rules: {
      'no-restricted-imports': noHandWrittenFiles,
    },
  },
  // Every folder with a package.json is a package: it reaches another only by its name and its
  // public exports, never by a relative path into the other's folder nor by its internal/* modules.
  {
    files: ['framework/**/*.ts', 'plugins/**/*.ts', 'hosts/**/*.ts', 'cli/**/*.ts'],
    plugins: { baton: packageBoundaries },
    rules: { 'baton/package-boundaries': 'error' },
  },
);
