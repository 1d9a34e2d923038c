/**
 * Node.js core module names, which npm refuses as names of new packages (`http`, `fs`...).
 *
 * A fixed list rather than `module.builtinModules` on purpose: validity of an authority must not
 * depend on which Node version a member runs, or two members of one cluster could disagree on
 * whether a transfer is valid. This is the list validate-npm-package-name ships (Node 20-22);
 * entries with `/` or `node:` are kept for fidelity although they fail the URL-safety rule first.
 */
// prettier-ignore
export const NPM_CORE_MODULE_NAMES: ReadonlySet<string> = new Set([
  '_http_agent', '_http_client', '_http_common', '_http_incoming', '_http_outgoing', '_http_server',
  '_stream_duplex', '_stream_passthrough', '_stream_readable', '_stream_transform', '_stream_wrap',
  '_stream_writable', '_tls_common', '_tls_wrap',
  'assert', 'assert/strict', 'async_hooks', 'buffer', 'child_process', 'cluster', 'console',
  'constants', 'crypto', 'dgram', 'diagnostics_channel', 'dns', 'dns/promises', 'domain', 'events',
  'fs', 'fs/promises', 'http', 'http2', 'https', 'inspector', 'inspector/promises', 'module', 'net',
  'os', 'path', 'path/posix', 'path/win32', 'perf_hooks', 'process', 'punycode', 'querystring',
  'readline', 'readline/promises', 'repl', 'stream', 'stream/consumers', 'stream/promises',
  'stream/web', 'string_decoder', 'sys', 'timers', 'timers/promises', 'tls', 'trace_events', 'tty',
  'url', 'util', 'util/types', 'v8', 'vm', 'wasi', 'worker_threads', 'zlib',
  'node:sea', 'node:sqlite', 'node:test', 'node:test/reporters',
]);

/** Names npm refuses outright, old packages included, compared case-insensitively. */
export const NPM_EXCLUDED_NAMES: ReadonlySet<string> = new Set(['node_modules', 'favicon.ico']);
