/**
 * A streaming JSON scanner, for inputs whose records sit inside one document too large to
 * parse whole (an OTLP export of 200,000 spans). It reads bytes as they come, checks the JSON
 * grammar and (by default) strict UTF-8, counts lines, and asks its handler at each value whose
 * container it descends into what to do with it: descend into it too, capture its bytes (at
 * most `maxCaptureBytes`, then only its length is reported), or skip it. Memory stays at one
 * captured value plus the path, whatever the size of the input.
 *
 * A file may hold several documents (one per line, as log exporters write them). Once the first
 * document has ended on the line it began, every document must: a line that ends inside one is
 * an error. On an error (grammar, encoding, nesting deeper than `maxDepth`, a document cut off)
 * the handler is told which document failed, and scanning resumes at the next line that opens
 * with `{` or `[`.
 */
import { isUtf8 } from 'node:buffer';

export type JsonPathSegment = string | number;
export type JsonValueKind = 'object' | 'array' | 'scalar';
export type ScanDecision = 'descend' | 'capture' | 'skip';

/** Where a value starts (or a container ends): byte offset in the input, line, document number (from 1). */
export interface ScanPosition {
  offset: number;
  line: number;
  document: number;
}

export interface JsonScanHandler {
  /** A value starts in a container being descended (or a document starts: path []): what to do with it. */
  enter(path: readonly JsonPathSegment[], kind: JsonValueKind, at: ScanPosition): ScanDecision;
  /** A container entered with `descend` closed; `end` is the offset just past its closing bracket. */
  leave(path: readonly JsonPathSegment[], kind: 'object' | 'array', end: number): void;
  /** A value entered with `capture` ended: its bytes, or undefined when it is longer than `maxCaptureBytes`. */
  captured(path: readonly JsonPathSegment[], bytes: Buffer | undefined, at: ScanPosition, byteLength: number): void;
  /**
   * The input cannot be read at `line`. `document` is the document it happened in (nothing more
   * comes from that one), undefined when it happened between documents.
   */
  failed(problem: { message: string; line: number; document?: number }): void;
}

export interface JsonScanOptions {
  maxCaptureBytes: number;
  /** Deepest nesting of objects and arrays in a document. */
  maxDepth: number;
  /** Check that the bytes are UTF-8 (false: latin1, every byte is a character). */
  utf8: boolean;
}

const enum State {
  /** Between documents. */
  Top,
  /** A value must come (after `:` or `,` in an array). */
  Value,
  /** After `[`: a value or `]`. */
  ValueOrClose,
  /** After `{`: a key or `}`. */
  KeyOrClose,
  /** After `,` in an object: a key. */
  Key,
  Colon,
  /** After a value in a container: `,` or the closing bracket. */
  After,
  InString,
  InKey,
  /** A number, true, false or null. */
  InLiteral,
  /** Skipping to a line that opens with `{` or `[`. */
  Resync,
}

interface Frame {
  kind: 'object' | 'array';
  mode: ScanDecision;
  /** Elements seen so far (arrays), for the path. */
  index: number;
  key: string;
}

/** The scan of one chunk: the next byte to read, and where the captured value or the kept key began in the chunk (-1: none open). */
interface ChunkCursor {
  chunk: Buffer;
  index: number;
  to: number;
  keepFrom: number;
  keyFrom: number;
}

const literalPattern = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)$/;
const longestLiteral = 256;
const longestKey = 1024;

/** Bytes at the end of a chunk that begin a UTF-8 sequence the next chunk completes. */
function incompleteTail(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back];
    if ((byte & 0xc0) === 0x80) continue;
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? back : 0;
  }
  return 0;
}

const isHexDigit = (byte: number) => (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 70) || (byte >= 97 && byte <= 102);
/** The characters that may follow a backslash in a JSON string: " \ / b f n r t u. */
const isEscape = (byte: number) => byte === 34 || byte === 92 || byte === 47 || byte === 98 || byte === 102 || byte === 110 || byte === 114 || byte === 116 || byte === 117;
const isLiteralByte = (byte: number) => (byte >= 48 && byte <= 57) || (byte >= 97 && byte <= 122) || byte === 45 || byte === 43 || byte === 46 || byte === 69;

export class JsonScanner {
  private state = State.Top;
  private frames: Frame[] = [];
  /** path[d] is the segment of the open value at depth d+1, under descended containers. */
  private path: JsonPathSegment[] = [];
  private line = 1;
  /** Offset in the input of the current chunk's first byte. */
  private base = 0;
  private document = 0;
  private documentLine = 0;
  /** Set when the first document ends: whether it ended on the line it began (then every document must). */
  private linePerDocument: boolean | undefined;
  private atLineStart = true;
  private escaped = false;
  private unicodeDigits = 0;
  private literal = '';
  /** A key of a descended object, in pieces while it spans chunks. */
  private keyParts: Buffer[] = [];
  private keySize = 0;
  private keepingKey = false;
  private carry: Buffer | undefined;
  private started = false;
  private capturing = false;
  private captureAt: ScanPosition = { offset: 0, line: 0, document: 0 };
  private capturePath: JsonPathSegment[] = [];
  private captureParts: Buffer[] = [];
  private captureSize = 0;
  private captureTooLarge = false;
  /** Depth of the captured container, or -1 for a captured scalar. */
  private captureDepth = 0;

  constructor(
    private readonly handler: JsonScanHandler,
    private readonly options: JsonScanOptions,
  ) {}

  /** Scans the next bytes of the input. */
  push(input: Buffer): void {
    let chunk = this.carry ? Buffer.concat([this.carry, input]) : input;
    this.carry = undefined;
    if (!this.started) {
      this.started = true;
      if (chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) {
        chunk = chunk.subarray(3);
        this.base = 3;
      }
    }
    if (this.options.utf8) {
      const tail = incompleteTail(chunk);
      if (tail > 0) {
        this.carry = Buffer.from(chunk.subarray(chunk.length - tail));
        chunk = chunk.subarray(0, chunk.length - tail);
      }
    }
    let start = 0;
    while (start < chunk.length) {
      if (!this.options.utf8 || isUtf8(chunk.subarray(start))) {
        this.scan(chunk, start, chunk.length);
        break;
      }
      // Scan the lines before the first one that is not UTF-8, fail on it, and resume after it.
      let lineStart = start;
      while (lineStart <= chunk.length) {
        const newline = chunk.indexOf(10, lineStart);
        const lineEnd = newline === -1 ? chunk.length : newline;
        if (!isUtf8(chunk.subarray(lineStart, lineEnd))) break;
        lineStart = lineEnd + 1;
      }
      this.scan(chunk, start, lineStart);
      this.fail('not valid UTF-8 text (if the file is Latin-1, give --encoding latin1)');
      const newline = chunk.indexOf(10, lineStart);
      start = newline === -1 ? chunk.length : newline;
    }
    this.base += chunk.length;
  }

  /** The input ended. Returns how many documents began. */
  end(): number {
    if (this.carry) {
      this.carry = undefined;
      this.fail('not valid UTF-8 text (the file ends inside a character)');
    }
    if (this.state === State.InLiteral) this.finishLiteral(this.base);
    if (this.state !== State.Top && this.state !== State.Resync) this.fail('the JSON document ends before it is complete');
    return this.document;
  }

  private fail(message: string): void {
    if (this.state !== State.Resync) this.handler.failed({ message, line: this.line, ...(this.state !== State.Top ? { document: this.document } : {}) });
    this.frames = [];
    this.capturing = false;
    this.captureParts = [];
    this.keyParts = [];
    this.keepingKey = false;
    this.literal = '';
    this.state = State.Resync;
    this.atLineStart = false;
  }

  /** A value starts at absolute `offset`: the handler decides when its container is descended (or it is a document). */
  private beginValue(kind: JsonValueKind, offset: number): ScanDecision {
    const parent = this.frames.at(-1);
    let mode: ScanDecision;
    if (parent === undefined) {
      this.document += 1;
      this.documentLine = this.line;
      mode = this.handler.enter([], kind, { offset, line: this.line, document: this.document });
    } else if (parent.mode === 'descend') {
      this.path[this.frames.length - 1] = parent.kind === 'array' ? parent.index : parent.key;
      mode = this.handler.enter(this.path.slice(0, this.frames.length), kind, { offset, line: this.line, document: this.document });
      if (mode === 'capture') {
        this.capturing = true;
        this.captureAt = { offset, line: this.line, document: this.document };
        this.capturePath = this.path.slice(0, this.frames.length);
        this.captureParts = [];
        this.captureSize = 0;
        this.captureTooLarge = false;
        this.captureDepth = kind === 'scalar' ? -1 : this.frames.length + 1;
      }
    } else mode = parent.mode;
    if (parent !== undefined && parent.kind === 'array') parent.index += 1;
    return mode === 'descend' && kind === 'scalar' ? 'skip' : mode;
  }

  /** Adds bytes [from, to) of the chunk to the captured value. */
  private keep(chunk: Buffer, from: number, to: number): void {
    if (this.captureTooLarge || to <= from) return;
    if (this.captureSize + (to - from) > this.options.maxCaptureBytes) {
      this.captureTooLarge = true;
      this.captureParts = [];
      return;
    }
    this.captureParts.push(chunk.subarray(from, to));
    this.captureSize += to - from;
  }

  /** The captured value ended just before absolute offset `end`. */
  private finishCapture(end: number): void {
    this.capturing = false;
    const bytes = this.captureTooLarge ? undefined : this.captureParts.length === 1 ? this.captureParts[0] : Buffer.concat(this.captureParts, this.captureSize);
    this.captureParts = [];
    this.handler.captured(this.capturePath, bytes, this.captureAt, end - this.captureAt.offset);
  }

  private valueDone(): void {
    if (this.frames.length > 0) {
      this.state = State.After;
      return;
    }
    this.state = State.Top;
    this.linePerDocument ??= this.line === this.documentLine;
  }

  /** Ends a number or true/false/null just before absolute `end`; false when it is not one. */
  private finishLiteral(end: number): boolean {
    const literal = this.literal;
    this.literal = '';
    if (!literalPattern.test(literal)) {
      this.fail(`not valid JSON: unexpected ${JSON.stringify(literal.slice(0, 20))}`);
      return false;
    }
    if (this.capturing && this.captureDepth === -1) this.finishCapture(end);
    this.valueDone();
    return true;
  }

  /** A closing bracket at `index`: ends a captured container, or tells the handler a descended one closed. */
  private close(chunk: Buffer, index: number, keepFrom: number): void {
    const frame = this.frames.pop()!;
    if (this.capturing && this.captureDepth === this.frames.length + 1) {
      this.keep(chunk, keepFrom, index + 1);
      this.finishCapture(this.base + index + 1);
    } else if (frame.mode === 'descend') this.handler.leave(this.path.slice(0, this.frames.length), frame.kind, this.base + index + 1);
    this.valueDone();
  }

  private scan(chunk: Buffer, from: number, to: number): void {
    const cursor: ChunkCursor = { chunk, index: from, to, keepFrom: this.capturing ? from : -1, keyFrom: this.keepingKey ? from : -1 };
    while (cursor.index < to) this.step(cursor);
    // The chunk ended inside a key or a captured value: keep what came of it so far.
    if (cursor.keyFrom >= 0) this.addKeyBytes(chunk, cursor.keyFrom, to);
    if (this.capturing && cursor.keepFrom >= 0) this.keep(chunk, cursor.keepFrom, to);
  }

  /** Reads the byte at the cursor (in a string, a run of plain characters) in the state the scanner is in. */
  private step(cursor: ChunkCursor): void {
    const state = this.state;
    if (state === State.InString) this.stringByte(cursor);
    else if (state === State.InKey) this.keyByte(cursor);
    else if (state === State.InLiteral) this.literalByte(cursor);
    else if (state === State.Resync) this.resyncByte(cursor);
    else {
      const byte = cursor.chunk[cursor.index];
      if (byte === 32 || byte === 9 || byte === 13 || byte === 10) this.whitespace(cursor, byte);
      else if (state === State.Colon) this.colon(cursor, byte);
      else if (state === State.After) this.afterValue(cursor, byte);
      else if (state === State.KeyOrClose || state === State.Key) this.keyStart(cursor, byte, state);
      else if (state === State.ValueOrClose && byte === 93) {
        this.closeHere(cursor);
        cursor.index += 1;
      } else this.valueStart(cursor, byte, state);
    }
  }

  /** Fails at the cursor and carries on scanning from the next byte, in resync. */
  private failHere(cursor: ChunkCursor, message: string): void {
    this.fail(message);
    if (cursor.chunk[cursor.index] === 10) {
      this.line += 1;
      this.atLineStart = true;
    }
    cursor.keepFrom = -1;
    cursor.keyFrom = -1;
    cursor.index += 1;
  }

  /** The byte after a backslash, or one of a `\u` escape's four digits, in a string or a key; false when it failed there. */
  private escapeByte(cursor: ChunkCursor, byte: number, where: 'string' | 'key'): boolean {
    if (this.unicodeDigits > 0) {
      if (!isHexDigit(byte)) {
        this.failHere(cursor, `not valid JSON: a bad \\u escape in a ${where}`);
        return false;
      }
      this.unicodeDigits -= 1;
      return true;
    }
    if (!isEscape(byte)) {
      this.failHere(cursor, `not valid JSON: a bad escape in a ${where}`);
      return false;
    }
    this.escaped = false;
    if (byte === 117) this.unicodeDigits = 4;
    return true;
  }

  private stringByte(cursor: ChunkCursor): void {
    const { chunk, to } = cursor;
    if (!this.escaped && this.unicodeDigits === 0) {
      // Plain characters up to the next quote, backslash or control character.
      let index = cursor.index;
      while (index < to) {
        const next = chunk[index];
        if (next === 34 || next === 92 || next < 32) break;
        index += 1;
      }
      cursor.index = index;
      if (index >= to) return;
    }
    const next = chunk[cursor.index];
    if (this.unicodeDigits > 0 || this.escaped) {
      if (!this.escapeByte(cursor, next, 'string')) return;
    } else if (next === 92) this.escaped = true;
    else if (next < 32) {
      this.failHere(cursor, next === 10 ? 'not valid JSON: a line break inside a string' : 'not valid JSON: a control character inside a string');
      return;
    } else {
      if (this.capturing && this.captureDepth === -1) {
        this.keep(chunk, cursor.keepFrom, cursor.index + 1);
        this.finishCapture(this.base + cursor.index + 1);
        cursor.keepFrom = -1;
      }
      this.valueDone();
    }
    cursor.index += 1;
  }

  private keyByte(cursor: ChunkCursor): void {
    const byte = cursor.chunk[cursor.index];
    if (this.unicodeDigits > 0 || this.escaped) {
      if (!this.escapeByte(cursor, byte, 'key')) return;
    } else if (byte === 92) this.escaped = true;
    else if (byte < 32) {
      this.failHere(cursor, 'not valid JSON: a control character inside a key');
      return;
    } else if (byte === 34) {
      if (cursor.keyFrom >= 0) {
        this.addKeyBytes(cursor.chunk, cursor.keyFrom, cursor.index + 1);
        this.frames.at(-1)!.key = this.keySize > longestKey ? '' : (JSON.parse(Buffer.concat(this.keyParts).toString(this.options.utf8 ? 'utf8' : 'latin1')) as string);
        this.keyParts = [];
        this.keepingKey = false;
        cursor.keyFrom = -1;
      }
      this.state = State.Colon;
    }
    cursor.index += 1;
  }

  private literalByte(cursor: ChunkCursor): void {
    const byte = cursor.chunk[cursor.index];
    if (isLiteralByte(byte)) {
      if (this.literal.length >= longestLiteral) {
        this.failHere(cursor, `not valid JSON: a number or literal longer than ${longestLiteral} characters`);
        return;
      }
      this.literal += String.fromCharCode(byte);
      cursor.index += 1;
      return;
    }
    if (this.capturing && this.captureDepth === -1) {
      this.keep(cursor.chunk, cursor.keepFrom, cursor.index);
      cursor.keepFrom = -1;
    }
    // The byte that ended it is read again in the state that follows.
    if (!this.finishLiteral(this.base + cursor.index)) {
      if (byte === 10) {
        this.line += 1;
        this.atLineStart = true;
      }
      cursor.index += 1;
    }
  }

  private resyncByte(cursor: ChunkCursor): void {
    const byte = cursor.chunk[cursor.index];
    if (byte === 10) {
      this.line += 1;
      this.atLineStart = true;
    } else if (this.atLineStart && (byte === 123 || byte === 91)) {
      this.state = State.Top;
      return;
    } else this.atLineStart = false;
    cursor.index += 1;
  }

  private whitespace(cursor: ChunkCursor, byte: number): void {
    if (byte === 10) {
      if (this.linePerDocument === true && this.frames.length > 0) {
        this.failHere(cursor, 'the line ends inside its JSON document (the file holds one document per line)');
        return;
      }
      this.line += 1;
    }
    cursor.index += 1;
  }

  private colon(cursor: ChunkCursor, byte: number): void {
    if (byte !== 58) {
      this.failHere(cursor, 'not valid JSON: expected ":" after a key');
      return;
    }
    this.state = State.Value;
    cursor.index += 1;
  }

  /** A closing bracket at the cursor; a captured value it ends is no longer kept from this chunk. */
  private closeHere(cursor: ChunkCursor): void {
    this.close(cursor.chunk, cursor.index, cursor.keepFrom);
    if (!this.capturing) cursor.keepFrom = -1;
  }

  private afterValue(cursor: ChunkCursor, byte: number): void {
    const frame = this.frames.at(-1)!;
    if (byte === 44) this.state = frame.kind === 'object' ? State.Key : State.Value;
    else if ((byte === 125 && frame.kind === 'object') || (byte === 93 && frame.kind === 'array')) this.closeHere(cursor);
    else {
      this.failHere(cursor, `not valid JSON: expected "," or "${frame.kind === 'object' ? '}' : ']'}"`);
      return;
    }
    cursor.index += 1;
  }

  private keyStart(cursor: ChunkCursor, byte: number, state: State): void {
    if (byte === 125 && state === State.KeyOrClose) {
      this.closeHere(cursor);
      cursor.index += 1;
      return;
    }
    if (byte !== 34) {
      this.failHere(cursor, 'not valid JSON: expected a key in double quotes');
      return;
    }
    this.keepingKey = this.frames.at(-1)!.mode === 'descend';
    cursor.keyFrom = this.keepingKey ? cursor.index : -1;
    this.keyParts = [];
    this.keySize = 0;
    this.escaped = false;
    this.unicodeDigits = 0;
    this.state = State.InKey;
    cursor.index += 1;
  }

  /** A value starts (states Top, Value, ValueOrClose). */
  private valueStart(cursor: ChunkCursor, byte: number, state: State): void {
    if (state === State.Top && this.linePerDocument === false) {
      this.failHere(cursor, 'not valid JSON: more text after the end of the document');
      return;
    }
    const isContainer = byte === 123 || byte === 91;
    if (!isContainer && byte !== 34 && byte !== 45 && !(byte >= 48 && byte <= 57) && byte !== 116 && byte !== 102 && byte !== 110) {
      this.failHere(cursor, `not valid JSON: unexpected ${JSON.stringify(String.fromCharCode(byte))}`);
      return;
    }
    if (isContainer && this.frames.length >= this.options.maxDepth) {
      this.failHere(cursor, `nested deeper than ${this.options.maxDepth} levels (the limit is --max-record-depth)`);
      return;
    }
    const wasCapturing = this.capturing;
    const mode = this.beginValue(isContainer ? (byte === 123 ? 'object' : 'array') : 'scalar', this.base + cursor.index);
    if (this.capturing && !wasCapturing) cursor.keepFrom = cursor.index;
    if (isContainer) {
      const kind = byte === 123 ? 'object' : 'array';
      this.frames.push({ kind, mode, index: 0, key: '' });
      this.state = kind === 'object' ? State.KeyOrClose : State.ValueOrClose;
    } else if (byte === 34) {
      this.state = State.InString;
      this.escaped = false;
      this.unicodeDigits = 0;
    } else {
      this.state = State.InLiteral;
      this.literal = String.fromCharCode(byte);
    }
    cursor.index += 1;
  }

  private addKeyBytes(chunk: Buffer, from: number, to: number): void {
    this.keySize += to - from;
    if (this.keySize <= longestKey) this.keyParts.push(Buffer.from(chunk.subarray(from, to)));
  }
}
