#!/usr/bin/env node
// The `baton` executable (package.json "bin"): runs the command line and exits with its code.
import { runCli } from './run.js';
import { findBatonPackage } from './scaffold/baton-package.js';

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  cwd: process.cwd(),
  env: process.env,
  pkg: findBatonPackage(),
});
