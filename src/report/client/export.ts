/**
 * Files a page hands to the user: the rows an explorer shows (CSV or JSON), reviews as a labels
 * file. Made in the page as a Blob and saved through a download link, so nothing leaves the
 * machine and the report needs no server.
 */
import { h } from './common.js';

/** Saves text as a file named `name`. */
export function downloadText(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: type }));
  const link = h('a', { attrs: { href: url, download: name }, style: { display: 'none' } });
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(function () { URL.revokeObjectURL(url); }, 10000);
}

/** One CSV field (RFC 4180: quoted when it holds a comma, quote or line break; quotes doubled). */
function csvField(value: unknown): string {
  const text = value === null || value === undefined ? '' : typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
  // A leading =, +, - or @ would be read as a formula by spreadsheets: a quote in front keeps it text.
  const safe = /^[=+\-@\t\r]/.test(text) && !/^-?\d+(\.\d+)?(e-?\d+)?$/i.test(text) ? "'" + text : text;
  return /[",\r\n]/.test(safe) ? '"' + safe.replace(/"/g, '""') + '"' : safe;
}

export function toCsv(columns: readonly string[], rows: ReadonlyArray<Record<string, unknown>>): string {
  const lines = [columns.map(csvField).join(',')];
  rows.forEach(function (row) { lines.push(columns.map(function (column) { return csvField(row[column]); }).join(',')); });
  return lines.join('\r\n') + '\r\n';
}

export interface RowExport {
  /** File name without extension. */
  name: string;
  columns(): string[];
  /** The rows shown, in their order. */
  rows(): Array<Record<string, unknown>>;
}

/** "Export CSV" and "Export JSON" buttons for the rows an explorer shows. */
export function exportButtons(source: RowExport): HTMLElement {
  function save(format: 'csv' | 'json'): void {
    const rows = source.rows();
    if (format === 'csv') downloadText(source.name + '.csv', toCsv(source.columns(), rows), 'text/csv');
    else downloadText(source.name + '.json', JSON.stringify(rows, null, 2) + '\n', 'application/json');
  }
  return h('div', { className: 'export-buttons' }, [
    h('button', { className: 'link-button', text: 'Export CSV', attrs: { type: 'button', title: 'the rows shown, as CSV' }, data: { testid: 'export-csv' }, on: { click: function () { save('csv'); } } }),
    h('button', { className: 'link-button', text: 'JSON', attrs: { type: 'button', title: 'the rows shown, as JSON' }, data: { testid: 'export-json' }, on: { click: function () { save('json'); } } })
  ]);
}
