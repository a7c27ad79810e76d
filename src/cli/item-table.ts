/**
 * The per-item table a run prints in the terminal (as promptfoo prints its results table): each
 * item's id, score, criteria met of all, and errors; rows whose verdicts were made up (the
 * scripted judge, `rubricate fake-judge`) say so. Asked with `--table`, and shown by itself on a
 * terminal when the run has few items; the rows kept are bounded, the rest counted.
 */
import { isMadeUp } from '../util/made-up.js';
import { renderTable } from '../meta/format-table.js';
import type { ResultRecord } from '../results/results.js';

/** A run of at most this many items shows its table on a terminal without being asked. */
export const autoTableItems = 20;

/** Rows a table keeps; later items are counted, and are in the results file. */
const rowsKept = 500;

/** Longest id shown; ids come from the input, so control characters are shown as `?`. */
const idWidth = 48;

function shownId(id: string): string {
  // eslint-disable-next-line no-control-regex -- terminal control characters from the input are what is replaced
  const printable = id.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return printable.length > idWidth ? `${printable.slice(0, idWidth - 1)}…` : printable;
}

function errorsOf(result: ResultRecord): string {
  const codes = result.criteria.filter((criterion) => criterion.status === 'error').map((criterion) => criterion.error?.code ?? 'error');
  if (result.status === 'invalid' || (codes.length === 0 && result.error)) return `invalid (${result.error?.code ?? 'INPUT_INVALID'})`;
  if (codes.length === 0) return '0';
  const [first] = codes;
  return `${codes.length} (${first}${codes.some((code) => code !== first) ? ', …' : ''})`;
}

export class ItemTable {
  private readonly rows: string[][] = [];
  private seen = 0;
  private madeUpRows = 0;

  /** Items the table was given (kept or only counted). */
  get items(): number {
    return this.seen;
  }

  add(result: ResultRecord): void {
    this.seen += 1;
    const invented = isMadeUp(result);
    if (invented) this.madeUpRows += 1;
    if (this.rows.length >= rowsKept) return;
    const judged = result.criteria.filter((criterion) => criterion.status !== 'skipped');
    const met = judged.filter((criterion) => criterion.met === true).length;
    this.rows.push([shownId(result.id), result.score === null || result.score === undefined ? '—' : result.score.toFixed(4), result.status === 'invalid' ? '—' : `${met}/${result.criteria.length}`, errorsOf(result), invented ? 'made up' : '']);
  }

  /** The results as they pass, each one added to the table. */
  async *tap(results: AsyncIterable<ResultRecord>): AsyncGenerator<ResultRecord> {
    for await (const result of results) {
      this.add(result);
      yield result;
    }
  }

  render(): string {
    const lines = [renderTable(['item', 'score', 'met/total', 'errors', 'verdicts'], this.rows)];
    if (this.seen > this.rows.length) lines.push(`… and ${this.seen - this.rows.length} more items (in the results file)`);
    if (this.madeUpRows > 0) lines.push(`made up: ${this.madeUpRows} of ${this.seen} items have verdicts no model gave (the scripted judge or rubricate fake-judge); do not read them as a judge's`);
    return lines.join('\n');
  }
}

/** Whether to print the table: asked (`--table`), refused (`--no-table`, `--quiet`), else on a terminal for a run of few items. */
export function showItemTable(flags: { table?: boolean; quiet?: boolean }, items: number, terminal: boolean): boolean {
  if (flags.quiet || flags.table === false) return false;
  return flags.table === true || (terminal && items > 0 && items <= autoTableItems);
}
