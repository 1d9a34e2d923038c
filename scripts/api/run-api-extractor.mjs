// Runs API Extractor on every package in this process, over one TypeScript program that holds
// every package's entry point: the program (parsing and binding every .d.ts of the checkout and of
// node_modules) is most of the cost, and the packages share most of their declarations.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { CompilerState, Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import { publiclyForgotten } from './forgotten-exports.mjs';

const require = createRequire(import.meta.url);

/**
 * The compiler settings the packages build with (tsconfig.base.json), read as a consumer's
 * compiler reads the emitted declarations. The baton-internal condition is set, as in the packages'
 * own builds: one package's declarations may name a sibling's @internal export, which the sibling's
 * full dist/index.d.ts declares.
 */
function compilerOptions(checkout) {
  const base = readJsonWithComments(join(checkout, 'tsconfig.base.json')).compilerOptions;
  return {
    ...base,
    composite: false,
    noEmit: true,
    customConditions: ['baton-internal'],
  };
}

function readJsonWithComments(path) {
  const ts = require('typescript');
  const parsed = ts.parseConfigFileTextToJson(path, readFileSync(path, 'utf8'));
  if (parsed.error) throw new Error(`${path}: ${ts.flattenDiagnosticMessageText(parsed.error.messageText, '\n')}`);
  return parsed.config;
}

function prepareConfig({ checkout, pkg, scratch, options }) {
  const configPath = join(checkout, 'api-extractor.json');
  const configObject = ExtractorConfig.loadFile(configPath);
  configObject.projectFolder = pkg.dir;
  configObject.mainEntryPointFilePath = pkg.entryPoint;
  configObject.apiReport = { ...configObject.apiReport, reportTempFolder: join(scratch, pkg.folder) };
  configObject.compiler = {
    overrideTsconfig: { compilerOptions: options, files: [pkg.entryPoint] },
  };
  return ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: configPath,
    packageJsonFullPath: join(pkg.dir, 'package.json'),
  });
}

/** What changed between the checked-in report and the one just made, as a unified diff. */
function reportDiff(checkout, checkedIn, made) {
  const name = relative(checkout, checkedIn);
  if (!existsSync(checkedIn)) return `  (${name} does not exist yet)`;
  try {
    execFileSync('git', ['diff', '--no-index', '--no-color', '--', checkedIn, made], { encoding: 'utf8' });
    return '';
  } catch (error) {
    // git diff exits 1 when the files differ; name them as the checkout does.
    if (typeof error.stdout !== 'string' || error.stdout.length === 0) return `  (could not diff ${name})`;
    return error.stdout
      .split(`a${checkedIn}`).join(`a/${name}`)
      .split(`b${made}`).join(`b/${name}`);
  }
}

/**
 * @returns {{ package: import('./published-packages.mjs').PublishedPackage, problems: string[],
 *   reportChanged: boolean, diff: string }[]}
 */
export function runApiExtractor({ checkout, packages, update, scratch }) {
  const options = compilerOptions(checkout);
  const configs = packages.map((pkg) => prepareConfig({ checkout, pkg, scratch, options }));
  const compilerState = CompilerState.create(configs[0], {
    additionalEntryPoints: packages.map((p) => p.entryPoint),
  });
  const typescriptCompilerFolder = dirname(require.resolve('typescript/package.json'));
  return packages.map((pkg, i) => {
    const problems = [];
    const forgotten = [];
    const before = existsSync(pkg.report) ? readFileSync(pkg.report, 'utf8') : undefined;
    const result = Extractor.invoke(configs[i], {
      localBuild: update,
      compilerState,
      typescriptCompilerFolder,
      messageCallback: (message) => {
        message.handled = true;
        if (message.logLevel !== 'error' && message.logLevel !== 'warning') return;
        // A report that differs (or is missing) is answered below, with its diff.
        if (message.messageId.startsWith('console-api-report-')) return;
        const text = message.formatMessageWithLocation(checkout);
        if (message.messageId === 'ae-forgotten-export' && message.sourceFilePath) {
          forgotten.push({
            symbol: /"([^"]+)"/.exec(message.text)?.[1] ?? message.text,
            file: message.sourceFilePath,
            line: message.sourceFileLine ?? 1,
            column: message.sourceFileColumn ?? 1,
            text,
          });
          return;
        }
        problems.push(text);
      },
    });
    problems.push(...publiclyForgotten(forgotten).map((r) => r.text));
    const made = join(scratch, pkg.folder, relative(pkg.dir, pkg.report));
    const reportChanged = result.apiReportChanged && !(before !== undefined && existsSync(made) && sameUpToUnionOrder(before, readFileSync(made, 'utf8')));
    // An update that would only reorder a union keeps the report as it was.
    if (update && result.apiReportChanged && !reportChanged) writeFileSync(pkg.report, before);
    return {
      package: pkg,
      problems,
      reportChanged,
      diff: reportChanged && !update ? reportDiff(checkout, pkg.report, made) : '',
    };
  });
}

/**
 * TypeScript prints a union of string literals in the order its checker first met those literals,
 * which an incremental build can change from a clean one ("none" | "read" | "append" against
 * "read" | "append" | "none"). Two reports that differ only so describe the same surface.
 */
function sameUpToUnionOrder(a, b) {
  const sorted = (text) => text.replace(/"[^"\n]*"(?: \| "[^"\n]*")+/g, (union) => union.split(' | ').sort().join(' | '));
  return a === b || sorted(a) === sorted(b);
}
