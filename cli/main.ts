#!/usr/bin/env node
// The `baton` executable (package.json "bin"): runs the command line and exits with its code.
import { runCli } from './run.js';
import { findBatonPackage } from './scaffold/baton-package.js';

// A reader that went away (`baton up | tee log` after Ctrl-C, a closed terminal) is no reason to
// crash: `baton up` must still stop its nodes in order, and other commands finish as they would.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  cwd: process.cwd(),
  env: process.env,
  pkg: findBatonPackage(),
});
