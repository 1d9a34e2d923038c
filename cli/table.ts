import type { HumanView } from './output.js';

/**
 * Rows as aligned columns for a person: a header line, then one line per row, each column as
 * wide as its widest cell. The last column is not padded, so lines carry no trailing spaces.
 * With `--no-headers` (view.headers false) the header line is left out, and the columns are
 * as wide as the rows alone need.
 */
export function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  view: Pick<HumanView, 'headers'> = { headers: true },
): string[] {
  const widths = header.map((title, column) =>
    Math.max(view.headers ? title.length : 0, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column])))
      .join('  ');
  return view.headers ? [line(header), ...rows.map(line)] : rows.map(line);
}
