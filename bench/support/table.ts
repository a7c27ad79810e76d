/**
 * Result tables for benchmark output: an aligned plain-text table for terminals and a
 * Markdown table for reports. Columns are the union of the rows' keys in first-seen order;
 * numbers are right-aligned, text left-aligned, missing cells empty.
 */

/** A row; absent or undefined cells print empty. */
export type TableRow = Record<string, string | number | undefined>;

export interface TableOptions {
  /** Decimal places for non-integer numbers (default 2); integers print as they are. */
  decimals?: number;
}

function columnsOf(rows: readonly TableRow[]): string[] {
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    for (const key of Object.keys(row)) {
      if (!seen.has(key)) {
        seen.add(key);
        columns.push(key);
      }
    }
  }
  return columns;
}

function formatCell(value: string | number | undefined, decimals: number): string {
  if (value === undefined) return '';
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'NaN';
    return Number.isInteger(value) ? String(value) : value.toFixed(decimals);
  }
  return value;
}

/** A column is numeric (right-aligned) when every present value in it is a number. */
function numericColumns(rows: readonly TableRow[], columns: readonly string[]): boolean[] {
  return columns.map((column) => rows.every((row) => row[column] === undefined || typeof row[column] === 'number'));
}

/** Aligned plain-text table: header, a dashed rule, then one line per row. */
export function formatTable(rows: readonly TableRow[], options: TableOptions = {}): string {
  if (rows.length === 0) return '';
  const decimals = options.decimals ?? 2;
  const columns = columnsOf(rows);
  const numeric = numericColumns(rows, columns);
  const cells = rows.map((row) => columns.map((column) => formatCell(row[column], decimals)));
  const widths = columns.map((column, index) => Math.max(column.length, ...cells.map((line) => line[index].length)));
  const render = (line: readonly string[]) =>
    line
      .map((cell, index) => (numeric[index] ? cell.padStart(widths[index]) : cell.padEnd(widths[index])))
      .join('  ')
      .trimEnd();
  return [render(columns), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.map(render)].join('\n');
}

function escapeMarkdown(cell: string): string {
  return cell.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/** GitHub-flavoured Markdown table; numeric columns are right-aligned (`---:`). */
export function formatMarkdownTable(rows: readonly TableRow[], options: TableOptions = {}): string {
  if (rows.length === 0) return '';
  const decimals = options.decimals ?? 2;
  const columns = columnsOf(rows);
  const numeric = numericColumns(rows, columns);
  const line = (cells: readonly string[]) => `| ${cells.map(escapeMarkdown).join(' | ')} |`;
  return [
    line(columns),
    `| ${numeric.map((isNumber) => (isNumber ? '---:' : '---')).join(' | ')} |`,
    ...rows.map((row) => line(columns.map((column) => formatCell(row[column], decimals)))),
  ].join('\n');
}
