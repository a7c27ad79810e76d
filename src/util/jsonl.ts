import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { RubricateError } from '../errors.js';
import { inputLimits } from './input-limits.js';
import { parseInputJson, type ParseResult } from './json.js';

export interface NumberedLine {
  /** 1-based line number. */
  line: number;
  /** The line's text ('' when `error` is set). */
  text: string;
  /** The line could not be read as text: longer than the record limit, or not in the input encoding. */
  error?: RubricateError;
}

function openError(file: string, error: NodeJS.ErrnoException): RubricateError {
  if (error.code === 'ENOENT') return new RubricateError('INPUT_UNREADABLE', 'file not found', { file });
  if (error.code === 'EISDIR') return new RubricateError('INPUT_UNREADABLE', 'is a folder, not a file', { file });
  if (error.code === 'EACCES' || error.code === 'EPERM') return new RubricateError('INPUT_UNREADABLE', 'permission denied', { file });
  return new RubricateError('INPUT_UNREADABLE', error.message, { file });
}

/** Decodes one line's bytes in the configured encoding; strict UTF-8 names the line when it is not. */
export function decodeLine(bytes: Buffer, file: string, line: number): { text: string } | { error: RubricateError } {
  if (inputLimits().encoding === 'latin1') return { text: bytes.toString('latin1') };
  if (!isUtf8(bytes)) {
    return { error: new RubricateError('INPUT_INVALID', 'not valid UTF-8 text (if the file is Latin-1, give --encoding latin1)', { file, line, field: 'encoding' }) };
  }
  return { text: bytes.toString('utf8') };
}

/**
 * Streams the lines of a text file with their numbers; never holds the file in memory, and
 * never more than one record's worth of a line. Blank lines are skipped. A line longer than
 * the record limit or not in the input encoding comes back with an `error` naming it, and
 * reading goes on. A missing file is an INPUT_INVALID error naming it.
 */
export async function* readLines(file: string): AsyncGenerator<NumberedLine> {
  const { maxRecordBytes } = inputLimits();
  const stream = createReadStream(file, { highWaterMark: 1 << 16 });
  await new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', (error: NodeJS.ErrnoException) => reject(openError(file, error)));
  });
  let parts: Buffer[] = [];
  let size = 0;
  let tooLong = false;
  let line = 0;
  const append = (piece: Buffer) => {
    if (tooLong || piece.length === 0) return;
    if (size + piece.length > maxRecordBytes) {
      // Past the limit: drop what we have and skip to the end of the line.
      tooLong = true;
      parts = [];
      return;
    }
    parts.push(piece);
    size += piece.length;
  };
  const finish = (): NumberedLine | undefined => {
    line += 1;
    const wasTooLong = tooLong;
    let bytes = parts.length === 1 ? parts[0] : Buffer.concat(parts, size);
    parts = [];
    size = 0;
    tooLong = false;
    if (wasTooLong) {
      return { line, text: '', error: new RubricateError('INPUT_INVALID', `line is longer than ${maxRecordBytes} bytes (the limit is --max-record-bytes)`, { file, line }) };
    }
    if (bytes.length > 0 && bytes[bytes.length - 1] === 13) bytes = bytes.subarray(0, bytes.length - 1);
    if (line === 1 && bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
    const decoded = decodeLine(bytes, file, line);
    if ('error' in decoded) return { line, text: '', error: decoded.error };
    if (decoded.text.trim() === '') return undefined;
    return { line, text: decoded.text };
  };
  let pendingBytes = false;
  try {
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        let start = 0;
        for (let newline = chunk.indexOf(10, start); newline !== -1; newline = chunk.indexOf(10, start)) {
          append(chunk.subarray(start, newline));
          pendingBytes = false;
          const out = finish();
          if (out) yield out;
          start = newline + 1;
        }
        if (start < chunk.length) {
          append(chunk.subarray(start));
          pendingBytes = true;
        }
      }
    } catch (error) {
      if (RubricateError.isInstance(error)) throw error;
      throw openError(file, error as NodeJS.ErrnoException);
    }
    if (pendingBytes) {
      const out = finish();
      if (out) yield out;
    }
  } finally {
    stream.destroy();
  }
}

/**
 * A line's JSON value, or one message saying why it has none: unreadable bytes or too long
 * (`lineError` from readLines), nested too deep, or not JSON.
 */
export function parseLineJson(text: string, lineError?: RubricateError): ParseResult<unknown> {
  if (lineError) return { ok: false, error: lineError.message };
  const parsed = parseInputJson(text);
  return parsed.ok ? parsed : { ok: false, error: parsed.error.startsWith('nested deeper') ? parsed.error : `not valid JSON: ${parsed.error}` };
}
