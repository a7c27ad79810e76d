/**
 * The importer's two reads of the file: `SpanIndexer`, the first (a `JsonScanner` handler that
 * indexes every span by trace: its place in the file, start time and line), and `SpanReader`,
 * which reads a trace's spans again by place.
 */
import { readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { RubricateError } from '../../errors.js';
import { inputLimits } from '../../util/input-limits.js';
import { parseInputJson } from '../../util/json.js';
import type { JsonPathSegment, JsonScanHandler, JsonValueKind, ScanDecision, ScanPosition } from '../../util/json-scan.js';
import { isGenAiSpan, nanos } from './messages.js';


/** Where a span is in the file, and what the first read learnt of it. */
interface SpanEntry {
  offset: number;
  length: number;
  line: number;
  order: number;
  start: bigint | undefined;
  field: string;
}

export interface TraceIndex {
  entries: SpanEntry[];
  /** The first line of any of its spans: the item's line. */
  line: number;
  genAi: boolean;
  /** A span of the trace that could not be read (too long): the trace is refused, not built without it. */
  unreadable?: { line: number; field: string };
}

interface OpenSpan {
  field: string;
  offset: number;
  startLine: number;
  spanIdLine?: number;
  traceId?: unknown;
  start?: bigint;
  genAi: boolean;
  attributes?: unknown;
  events?: unknown;
  tooLarge: boolean;
}

/**
 * The first read: a `JsonScanner` handler that walks OTLP JSON (or a plain list of spans),
 * reports each problem with its line and field, and indexes every span by trace. The spans of a
 * document that turns out unreadable are dropped with it.
 */
export class SpanIndexer implements JsonScanHandler {
  readonly traces = new Map<string, TraceIndex>();
  /** Problems found so far, taken by the reader between chunks. */
  problems: Array<{ message: string; line: number; field?: string }> = [];
  private pending: Array<{ traceId: string; entry: SpanEntry; genAi: boolean }> = [];
  private documentKind: JsonValueKind = 'object';
  private documentLine = 1;
  private sawResourceSpans = false;
  private resourceHasScopes = false;
  private scopeHasSpans = false;
  private span: OpenSpan | undefined;
  private order = 0;

  constructor(private readonly maxRecordBytes: number) {}

  private isSpanPath(path: readonly JsonPathSegment[]): boolean {
    return this.documentKind === 'array' ? path.length === 1 : path.length === 6 && path[0] === 'resourceSpans' && path[4] === 'spans';
  }

  enter(path: readonly JsonPathSegment[], kind: JsonValueKind, at: ScanPosition): ScanDecision {
    const depth = path.length;
    if (depth === 0) {
      this.documentKind = kind;
      this.documentLine = at.line;
      this.sawResourceSpans = false;
      if (kind !== 'scalar') return 'descend';
      this.problems.push({ message: 'expected OTLP JSON ({"resourceSpans": [...]}) or a list of spans', field: 'resourceSpans', line: at.line });
      return 'skip';
    }
    if (this.span && depth === (this.documentKind === 'array' ? 2 : 7)) return 'capture';
    if (this.isSpanPath(path)) {
      if (kind !== 'object') {
        this.problems.push({ message: 'a span must be an object', field: fieldOf(path), line: at.line });
        return 'skip';
      }
      this.span = { field: fieldOf(path), offset: at.offset, startLine: at.line, genAi: false, tooLarge: false };
      return 'descend';
    }
    if (this.documentKind === 'array') return 'skip';
    const list = (message: string, field: string) => {
      if (kind === 'array') return 'descend';
      this.problems.push({ message, field, line: at.line });
      return 'skip';
    };
    switch (depth) {
      case 1:
        if (path[0] !== 'resourceSpans') return 'skip';
        this.sawResourceSpans = true;
        return list('expected OTLP JSON ({"resourceSpans": [...]}) or a list of spans', 'resourceSpans');
      case 2:
        this.resourceHasScopes = false;
        if (kind === 'object') return 'descend';
        this.problems.push({ message: 'scopeSpans must be a list', field: `${fieldOf(path)}.scopeSpans`, line: at.line });
        return 'skip';
      case 3:
        if (path[2] !== 'scopeSpans' && path[2] !== 'instrumentationLibrarySpans') return 'skip';
        this.resourceHasScopes = true;
        return list('scopeSpans must be a list', fieldOf(path));
      case 4:
        this.scopeHasSpans = false;
        if (kind === 'object') return 'descend';
        this.problems.push({ message: 'spans must be a list', field: `${fieldOf(path)}.spans`, line: at.line });
        return 'skip';
      case 5:
        if (path[4] !== 'spans') return 'skip';
        this.scopeHasSpans = true;
        return list('spans must be a list', fieldOf(path));
      default:
        return 'skip';
    }
  }

  leave(path: readonly JsonPathSegment[], _kind: 'object' | 'array', end: number): void {
    if (this.span && this.isSpanPath(path)) {
      this.finishSpan(this.span, end);
      this.span = undefined;
      return;
    }
    if (path.length === 0) {
      if (this.documentKind === 'object' && !this.sawResourceSpans) this.problems.push({ message: 'expected OTLP JSON ({"resourceSpans": [...]}) or a list of spans', field: 'resourceSpans', line: this.documentLine });
      this.commit();
    } else if (this.documentKind === 'object' && path.length === 2 && !this.resourceHasScopes) {
      this.problems.push({ message: 'scopeSpans must be a list', field: `${fieldOf(path)}.scopeSpans`, line: this.documentLine });
    } else if (this.documentKind === 'object' && path.length === 4 && !this.scopeHasSpans) {
      this.problems.push({ message: 'spans must be a list', field: `${fieldOf(path)}.spans`, line: this.documentLine });
    }
  }

  captured(path: readonly JsonPathSegment[], bytes: Buffer | undefined, at: ScanPosition): void {
    const span = this.span!;
    if (bytes === undefined) {
      span.tooLarge = true;
      return;
    }
    const key = path.at(-1);
    if (key === 'spanId') span.spanIdLine = at.line;
    if (key !== 'traceId' && key !== 'startTimeUnixNano' && key !== 'attributes' && key !== 'events') return;
    const parsed = parseInputJson(bytes.toString(inputLimits().encoding));
    if (!parsed.ok) return; // the span is parsed again when its trace is built, and fails there with this reason
    if (key === 'traceId') span.traceId = parsed.value;
    else if (key === 'startTimeUnixNano') span.start = nanos(parsed.value);
    else if (key === 'attributes') span.attributes = parsed.value;
    else span.events = parsed.value;
  }

  failed(problem: { message: string; line: number; document?: number }): void {
    this.problems.push({ message: problem.message, line: problem.line, ...(problem.message.startsWith('not valid UTF-8') ? { field: 'encoding' } : {}) });
    if (problem.document !== undefined) {
      this.pending = [];
      this.span = undefined;
    }
  }

  private finishSpan(span: OpenSpan, end: number): void {
    const line = span.spanIdLine ?? span.startLine;
    const length = end - span.offset;
    const traceId = typeof span.traceId === 'string' && span.traceId !== '' ? span.traceId : undefined;
    if (span.tooLarge || length > this.maxRecordBytes) {
      this.problems.push({ message: `the span is longer than ${this.maxRecordBytes} bytes (the limit is --max-record-bytes)`, field: span.field, line });
      if (traceId !== undefined) this.trace(traceId).unreadable ??= { line, field: span.field };
      return;
    }
    if (traceId === undefined) {
      this.problems.push({ message: 'a span needs its traceId', field: `${span.field}.traceId`, line });
      return;
    }
    const entry: SpanEntry = { offset: span.offset, length, line, order: this.order, start: span.start, field: span.field };
    this.order += 1;
    this.pending.push({ traceId, entry, genAi: isGenAiSpan(span.attributes, span.events) });
  }

  private trace(traceId: string): TraceIndex {
    let trace = this.traces.get(traceId);
    if (!trace) this.traces.set(traceId, (trace = { entries: [], line: Number.POSITIVE_INFINITY, genAi: false }));
    return trace;
  }

  /** A document ended: its spans join their traces. */
  private commit(): void {
    for (const { traceId, entry, genAi } of this.pending) {
      const trace = this.trace(traceId);
      trace.entries.push(entry);
      if (entry.line < trace.line) trace.line = entry.line;
      if (genAi) trace.genAi = true;
    }
    this.pending = [];
  }
}

function fieldOf(path: readonly JsonPathSegment[]): string {
  return path.map((segment, index) => (typeof segment === 'number' ? `[${segment}]` : index === 0 ? segment : `.${segment}`)).join('');
}

/**
 * Reads spans again by their place in the file; consecutive spans come from one read ahead. The
 * reads are synchronous: the input is a regular file (checked before the first read), and a
 * trace's spans are read one by one, so a round trip through the thread pool per span would cost
 * more than the read itself.
 */
export class SpanReader {
  private window = Buffer.alloc(0);
  private windowStart = 0;

  constructor(private readonly handle: FileHandle) {}

  read(offset: number, length: number): Buffer {
    const from = offset - this.windowStart;
    if (from >= 0 && from + length <= this.window.length) return this.window.subarray(from, from + length);
    // Just past the window: the file is being read in order, so read well ahead; else only this span.
    const inOrder = from >= 0 && from <= this.window.length + 4096;
    const size = inOrder ? Math.max(length, 1 << 20) : length;
    const buffer = Buffer.allocUnsafe(size);
    const bytesRead = readSync(this.handle.fd, buffer, 0, size, offset);
    this.window = buffer.subarray(0, bytesRead);
    this.windowStart = offset;
    if (bytesRead < length) throw new RubricateError('INPUT_UNREADABLE', 'the file became shorter while it was read', { field: 'input' });
    return this.window.subarray(0, length);
  }
}
