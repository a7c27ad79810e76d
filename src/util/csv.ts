/**
 * CSV files as records: RFC 4180 quoting (quoted fields may hold commas, doubled quotes and
 * line breaks), a header row naming the columns, streamed so a large file is never held whole.
 * A cell that holds a list or an object (JSON, or the Python repr a pandas export writes) becomes
 * that value; an empty cell is absent (pandas writes missing values as empty cells).
 */
import { createReadStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { RubricateError } from '../errors.js';
import { inputLimits } from './input-limits.js';
import { safeParseJson } from './json.js';
import { parsePythonLiteral } from './python-literal.js';

export type CsvRecord = { line: number; value: Record<string, unknown> } | { line: number; error: RubricateError };

/** The column separator a file name implies: tab for `.tsv`, else comma. */
export function csvSeparatorFor(file: string): string {
  return /\.tsv$/i.test(file) ? '\t' : ',';
}

/** True for the file names read as CSV (`.csv`, `.tsv`). */
export function isCsvFileName(file: string): boolean {
  return /\.(csv|tsv)$/i.test(file);
}

/** A structured cell (`[…]` or `{…}`) as its value, when it parses completely; else the text. */
export function decodeCsvCell(text: string): unknown {
  const trimmed = text.trim();
  if (!/^[[{]/.test(trimmed)) return text;
  const json = safeParseJson(trimmed);
  if (json.ok) return json.value;
  const python = parsePythonLiteral(trimmed);
  return python.ok ? python.value : text;
}

/** Splits CSV text into rows of fields; keeps state across chunks. */
class CsvRowParser {
  private field = '';
  private row: string[] = [];
  private inQuotes = false;
  /** A quote seen inside a quoted field: either the closing quote or the first of a doubled one. */
  private quotePending = false;
  private rowBytes = 0;
  line = 1;
  rowStartLine = 1;
  tooLong = false;

  constructor(
    private readonly separator: string,
    private readonly maxRowChars: number,
  ) {}

  /** Feeds text; returns the rows completed by it, each with the line it started on. */
  push(text: string): Array<{ line: number; fields: string[]; tooLong: boolean }> {
    const rows: Array<{ line: number; fields: string[]; tooLong: boolean }> = [];
    for (let index = 0; index < text.length; index += 1) {
      const char = text[index];
      this.rowBytes += 1;
      if (this.rowBytes > this.maxRowChars) this.tooLong = true;
      if (this.quotePending) {
        this.quotePending = false;
        if (char === '"') {
          this.append('"');
          continue;
        }
        this.inQuotes = false;
      }
      if (this.inQuotes) {
        if (char === '"') this.quotePending = true;
        else {
          if (char === '\n') this.line += 1;
          this.append(char);
        }
        continue;
      }
      if (char === '"' && this.field === '') this.inQuotes = true;
      else if (char === this.separator) this.endField();
      else if (char === '\n') {
        rows.push(this.endRow());
        this.line += 1;
      } else if (char !== '\r') this.append(char);
    }
    return rows;
  }

  /** The last row when the text does not end with a line break. */
  finish(): { line: number; fields: string[]; tooLong: boolean } | undefined {
    if (this.quotePending) {
      this.quotePending = false;
      this.inQuotes = false;
    }
    if (this.field === '' && this.row.length === 0) return undefined;
    return this.endRow();
  }

  get unterminatedQuote(): boolean {
    return this.inQuotes && !this.quotePending;
  }

  private append(char: string): void {
    if (!this.tooLong) this.field += char;
  }

  private endField(): void {
    this.row.push(this.field);
    this.field = '';
  }

  private endRow(): { line: number; fields: string[]; tooLong: boolean } {
    this.endField();
    const done = { line: this.rowStartLine, fields: this.row, tooLong: this.tooLong };
    this.row = [];
    this.rowBytes = 0;
    this.tooLong = false;
    this.rowStartLine = this.line + 1;
    return done;
  }
}

/**
 * Streams a CSV file's data rows as objects keyed by the header's column names. `line` is the
 * line each row starts on (the header is line 1). A row with more cells than the header, or
 * longer than --max-record-bytes, comes back as an error naming its line; reading goes on.
 */
export async function* readCsvRecords(file: string, separator = csvSeparatorFor(file)): AsyncGenerator<CsvRecord> {
  const { maxRecordBytes, encoding } = inputLimits();
  const parser = new CsvRowParser(separator, maxRecordBytes);
  const decoder = new StringDecoder(encoding === 'latin1' ? 'latin1' : 'utf8');
  let header: string[] | undefined;
  const toRecord = (row: { line: number; fields: string[]; tooLong: boolean }): CsvRecord | undefined => {
    if (row.fields.length === 1 && row.fields[0].trim() === '') return undefined;
    if (!header) {
      header = row.fields.map((name, index) => (index === 0 ? name.replace(/^\uFEFF/, '') : name).trim());
      return undefined;
    }
    if (row.tooLong) return { line: row.line, error: new RubricateError('INPUT_INVALID', `row is longer than ${maxRecordBytes} bytes (the limit is --max-record-bytes)`, { file, line: row.line }) };
    if (row.fields.length > header.length) {
      return { line: row.line, error: new RubricateError('INPUT_INVALID', `row has ${row.fields.length} cells but the header names ${header.length} columns`, { file, line: row.line }) };
    }
    const value: Record<string, unknown> = {};
    row.fields.forEach((cell, index) => {
      const name = header![index];
      if (cell === '' || name === '' || name === '__proto__') return;
      value[name] = decodeCsvCell(cell);
    });
    return { line: row.line, value };
  };
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    for (const row of parser.push(decoder.write(chunk))) {
      const record = toRecord(row);
      if (record) yield record;
    }
  }
  const rest = parser.push(decoder.end());
  for (const row of rest) {
    const record = toRecord(row);
    if (record) yield record;
  }
  if (parser.unterminatedQuote) {
    yield { line: parser.rowStartLine, error: new RubricateError('INPUT_INVALID', 'a quoted cell is never closed (a `"` is missing)', { file, line: parser.rowStartLine }) };
    return;
  }
  const last = parser.finish();
  if (last) {
    const record = toRecord(last);
    if (record) yield record;
  }
}

/** The first line's cells, for describing a file (`a CSV file with columns …`). */
export function csvHeaderCells(firstLine: string, separator: string): string[] {
  const parser = new CsvRowParser(separator, Number.POSITIVE_INFINITY);
  const rows = parser.push(`${firstLine}\n`);
  return rows[0]?.fields.map((cell) => cell.trim()) ?? [];
}
