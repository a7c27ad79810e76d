/**
 * What a file looks like, from its first bytes, so an input of the wrong type gets one
 * diagnosis naming the file and what it is (a JSON array, a CSV export, a gzip archive…)
 * instead of an error on every line. Only consulted once a reader has already failed on the
 * file's first record, so a good file never pays for it.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { RubricateError } from '../errors.js';
import { csvHeaderCells } from './csv.js';
import { safeParseJson } from './json.js';

const sniffBytes = 64 * 1024;

const magic: Array<{ bytes: number[]; what: string }> = [
  { bytes: [0x1f, 0x8b], what: 'a gzip-compressed file: decompress it first (gunzip)' },
  { bytes: [0x50, 0x4b, 0x03, 0x04], what: 'a zip archive (or an .xlsx/.docx document): extract or export it first' },
  { bytes: [0x28, 0xb5, 0x2f, 0xfd], what: 'a zstd-compressed file: decompress it first (unzstd)' },
  { bytes: [0x42, 0x5a, 0x68], what: 'a bzip2-compressed file: decompress it first (bunzip2)' },
  { bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], what: 'an xz-compressed file: decompress it first (unxz)' },
  { bytes: [...Buffer.from('SQLite format 3\0')], what: 'an SQLite database (a rubricate cache?), not an input file' },
  { bytes: [...Buffer.from('PAR1')], what: "a Parquet file: export it to JSONL first (pandas: df.to_json(path, orient='records', lines=True))" },
  { bytes: [...Buffer.from('%PDF')], what: 'a PDF document' },
  { bytes: [0x89, 0x50, 0x4e, 0x47], what: 'a PNG image' },
  { bytes: [0xff, 0xd8, 0xff], what: 'a JPEG image' },
  { bytes: [...Buffer.from('ARROW1')], what: 'an Arrow file: export it to JSONL first' },
];

function head(file: string): Buffer | undefined {
  try {
    if (statSync(file).isDirectory()) return undefined;
    const descriptor = openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(sniffBytes);
      const read = readSync(descriptor, buffer, 0, sniffBytes, 0);
      return buffer.subarray(0, read);
    } finally {
      closeSync(descriptor);
    }
  } catch {
    return undefined;
  }
}

function quoted(text: string, limit = 60): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return `“${flat.length > limit ? `${flat.slice(0, limit)}…` : flat}”`;
}

/** A binary or compressed file, whatever was expected; undefined for text. */
function binaryKind(bytes: Buffer): string | undefined {
  for (const { bytes: signature, what } of magic) {
    if (bytes.length >= signature.length && signature.every((byte, index) => bytes[index] === byte)) return what;
  }
  const sample = bytes.subarray(0, 8192);
  let control = 0;
  for (const byte of sample) {
    if (byte === 0) return 'a binary file (it holds NUL bytes), not text';
    if (byte < 9 || (byte > 13 && byte < 32)) control += 1;
  }
  if (sample.length > 0 && control / sample.length > 0.1) return 'a binary file, not text';
  // UTF-16 text (a BOM) reads as garbage in UTF-8.
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) return 'UTF-16 text: save it as UTF-8';
  return undefined;
}

function textLines(bytes: Buffer): string[] {
  // The last line may be cut by the sniff window: drop it unless the file ended there.
  const text = bytes.toString(isUtf8(bytes) ? 'utf8' : 'latin1').replace(/^\uFEFF/, '');
  const lines = text.split(/\r?\n/);
  if (bytes.length === sniffBytes) lines.pop();
  return lines.filter((line) => line.trim() !== '');
}

function looksLikeCsv(lines: readonly string[]): { separator: string; columns: string[] } | undefined {
  const first = lines[0];
  if (!first || /^\s*[[{]/.test(first)) return undefined;
  for (const separator of [',', '\t', ';']) {
    const columns = csvHeaderCells(first, separator);
    if (columns.length >= 2 && columns.every((column) => column !== '' && column.length <= 80)) return { separator, columns };
  }
  return undefined;
}

function describeCsv(csv: { separator: string; columns: string[] }): string {
  const named = csv.columns.slice(0, 8).join(', ') + (csv.columns.length > 8 ? ', …' : '');
  return `a ${csv.separator === '\t' ? 'tab-separated (TSV)' : 'CSV'} file with columns ${named}`;
}

/**
 * Why a file that should be JSONL (one JSON object per line) is not, or undefined when it looks
 * like JSONL after all (its bad lines are then reported one by one).
 */
export function describeNonJsonl(file: string): string | undefined {
  const bytes = head(file);
  if (!bytes || bytes.length === 0) return undefined;
  const binary = binaryKind(bytes);
  if (binary) return binary;
  const lines = textLines(bytes);
  if (lines.length === 0) return undefined;
  const first = lines[0].trim();
  if (first.startsWith('[')) {
    // A list on the first line of a file whose next lines are objects is one bad JSONL line.
    if (safeParseJson(first).ok && lines.length > 1) return undefined;
    return `a JSON array (one JSON document); turn it into JSONL with: jq -c '.[]' ${file}`;
  }
  if (first.startsWith('{')) {
    const parsed = safeParseJson(first);
    if (!parsed.ok && lines.length > 1 && !lines.slice(1, 6).some((line) => safeParseJson(line.trim()).ok)) {
      return `one pretty-printed JSON document; if it holds a list of records, turn it into JSONL with: jq -c '.[]' ${file}`;
    }
    return undefined;
  }
  const csv = looksLikeCsv(lines);
  if (csv) return `${describeCsv(csv)}; name it .csv (or .tsv) to read it as CSV`;
  const candidates = lines.slice(0, 5);
  if (!candidates.some((line) => safeParseJson(line.trim()).ok)) return `text that is not JSON (none of its first ${candidates.length} lines is; line 1: ${quoted(lines[0])})`;
  return undefined;
}

/** Why a file that should be one JSON document is not: JSONL, CSV, binary; undefined otherwise. */
export function describeNonJsonDocument(file: string): string | undefined {
  const bytes = head(file);
  if (!bytes || bytes.length === 0) return undefined;
  const binary = binaryKind(bytes);
  if (binary) return binary;
  const lines = textLines(bytes);
  if (lines.length >= 2 && lines.slice(0, 3).every((line) => {
    const parsed = safeParseJson(line.trim());
    return parsed.ok && typeof parsed.value === 'object' && parsed.value !== null;
  })) {
    return `JSONL (one JSON object per line); turn it into a JSON array with: jq -s . ${file}`;
  }
  const csv = looksLikeCsv(lines);
  if (csv) return describeCsv(csv);
  return undefined;
}

/** The one error for an input of the wrong type (exit 2: nothing was read from it). */
export function wrongFileType(file: string, looksLike: string, expected: string): RubricateError {
  return new RubricateError('INPUT_WRONG_TYPE', `expected ${expected}, but this looks like ${looksLike}`, { file });
}
