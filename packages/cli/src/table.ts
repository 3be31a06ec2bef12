/** One column of a table: its header and how to read a row's cell. */
export interface Column<Row> {
  readonly header: string;
  readonly cell: (row: Row) => string;
  /** Right-align (numbers, sizes). */
  readonly right?: boolean;
  /** Cut longer cells to this many characters, ending in "…". */
  readonly max?: number;
}

/** Collapses control characters so a value can never break the table (or the terminal). */
function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ');
}

function cut(text: string, max: number | undefined): string {
  return max !== undefined && text.length > max ? `${text.slice(0, Math.max(1, max - 1))}…` : text;
}

/** Plain aligned columns, a header line first, two spaces between columns, no trailing spaces. */
export function formatTable<Row>(columns: readonly Column<Row>[], rows: readonly Row[]): string {
  const cells = rows.map((row) => columns.map((column) => cut(printable(column.cell(row)), column.max)));
  const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((line) => line[i]?.length ?? 0)));
  const render = (line: readonly string[]): string =>
    line
      .map((text, i) => {
        const width = widths[i] ?? 0;
        return columns[i]?.right === true ? text.padStart(width) : text.padEnd(width);
      })
      .join('  ')
      .trimEnd();
  return [render(columns.map((c) => c.header)), ...cells.map(render)].map((line) => `${line}\n`).join('');
}

/** `label  value` lines with the labels aligned, for one record. */
export function formatFields(fields: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...fields.map(([label]) => label.length));
  return fields.map(([label, value]) => `${`${label}:`.padEnd(width + 1)}  ${printable(value)}\n`).join('');
}
