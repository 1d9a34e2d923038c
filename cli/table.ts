/**
 * Rows as aligned columns for a person: a header line, then one line per row, each column as
 * wide as its widest cell. The last column is not padded, so lines carry no trailing spaces.
 */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column])))
      .join('  ');
  return [line(header), ...rows.map(line)];
}
