import { stringify as toYaml } from 'yaml';
import { BatonError } from '@baton/contracts';
import { CliError, FailedError } from './cli-errors.js';

/** Where output goes; process.stdout/stderr in the command, string buffers in tests. */
export interface Sink {
  write(text: string): unknown;
  /** True on a terminal: progress is then drawn as a bar instead of one line per update. */
  isTTY?: boolean;
  columns?: number;
}

/** What `-o` selects: a table for a person (wide: with every column), a document, or names only. */
export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml', 'name'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** How the human rendering of a result is drawn: tables with or without their header, wide or not. */
export interface HumanView {
  headers: boolean;
  wide: boolean;
}

/**
 * How every command speaks. Humans get readable lines by default (`-o table`, or `-o wide` for
 * every column); with `-o json` (or `--json`) a script gets exactly one JSON document on stdout
 * per command (the result, or nothing on error) and errors as one JSON document on stderr, so
 * `baton ... -o json | jq` never sees prose. `-o yaml` is the same document as YAML; `-o name`
 * prints the names or ids the result is about, one per line, for `xargs` and loops.
 */
export class Output {
  readonly format: OutputFormat;
  readonly json: boolean;
  private readonly view: HumanView;

  constructor(
    format: OutputFormat | boolean,
    private readonly stdout: Sink = process.stdout,
    private readonly stderr: Sink = process.stderr,
    options: { headers?: boolean } = {},
  ) {
    this.format = format === true ? 'json' : format === false ? 'table' : format;
    this.json = this.format === 'json';
    this.view = { headers: options.headers !== false, wide: this.format === 'wide' };
  }

  /** True when the result goes to a program (json, yaml, name): no prose, no prompts. */
  get machine(): boolean {
    return this.format === 'json' || this.format === 'yaml' || this.format === 'name';
  }

  /**
   * The command's result: `data` as a document with json or yaml, its names with `name` (what
   * `names` picks, else the ids found in it), else the lines `human` renders from it.
   */
  result<T>(data: T, human: (data: T, view: HumanView) => string | string[], names?: (data: T) => string[]): void {
    if (this.format === 'json') {
      this.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
      return;
    }
    if (this.format === 'yaml') {
      // Through JSON first, so yaml shows exactly what json does (no undefined, Dates as strings).
      this.stdout.write(toYaml(JSON.parse(JSON.stringify(data ?? null)) as unknown));
      return;
    }
    if (this.format === 'name') {
      const listed = names ? names(data) : namesIn(data);
      if (listed.length > 0) this.stdout.write(`${listed.join('\n')}\n`);
      return;
    }
    const text = human(data, this.view);
    const lines = Array.isArray(text) ? text : [text];
    if (lines.length > 0) this.stdout.write(`${lines.join('\n')}\n`);
  }

  /** A remark for a person (progress, a hint): stderr, so it never mixes into a document. */
  note(line: string): void {
    if (!this.machine) this.stderr.write(`${line}\n`);
  }

  /** Reports a failure: one line for a person, or `{"error": {code, message}}` for a script. */
  error(error: CliError): void {
    if (this.format === 'json' || this.format === 'yaml') {
      const body: Record<string, unknown> = {
        code: error.code,
        message: error.message,
        exitCode: error.exitCode,
      };
      this.stderr.write(`${JSON.stringify({ error: body })}\n`);
    } else {
      this.stderr.write(`baton: ${error.message}\n`);
    }
  }
}

/** The fields that name an item, in the order they are looked for. */
const NAME_FIELDS = ['name', 'id', 'stream', 'authority', 'member', 'node'] as const;

/**
 * The names a result is about, for `-o name`: the items of its first list (each by its name,
 * id, stream, authority, member or node field, an offset for records), else the result's own.
 */
export function namesIn(data: unknown): string[] {
  if (Array.isArray(data)) return data.flatMap((item) => nameOf(item) ?? []);
  if (data === null || typeof data !== 'object') return data === undefined || data === null ? [] : [String(data)];
  for (const value of Object.values(data)) {
    if (Array.isArray(value) && value.some((item) => nameOf(item) !== undefined)) {
      return value.flatMap((item) => nameOf(item) ?? []);
    }
  }
  const own = nameOf(data);
  return own === undefined ? [] : [own];
}

function nameOf(item: unknown): string | undefined {
  if (typeof item === 'string') return item;
  if (item === null || typeof item !== 'object') return undefined;
  const record = item as Record<string, unknown>;
  for (const field of NAME_FIELDS) {
    const value = record[field];
    if (typeof value === 'string' && value !== '') return value;
  }
  if (typeof record.offset === 'number') return String(record.offset);
  return undefined;
}

/**
 * Any thrown value as a CliError. Baton's own errors keep their code and message (they already
 * say what was wrong and what to do); anything else is a defect, reported in one line with the
 * hint to rerun with BATON_DEBUG=1 for the stack.
 */
export function toCliError(error: unknown): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof BatonError)
    return new FailedError(error.code, error.message, { cause: error });
  const message = error instanceof Error ? error.message : String(error);
  return new FailedError(
    'internal',
    `unexpected error: ${message} (set BATON_DEBUG=1 to see where)`,
    { cause: error },
  );
}
