import { describe, expect, it } from 'vitest';
import { JsonScanner, type JsonPathSegment, type JsonScanHandler, type ScanDecision } from './json-scan.js';

interface Seen {
  captured: Array<{ path: string; value: unknown; line: number; offset: number; length: number }>;
  tooLarge: string[];
  left: string[];
  failed: Array<{ message: string; line: number; document?: number }>;
  documents: number;
}

/** Descends into every container at depth < captureDepth and captures the values at that depth. */
function scan(input: string | Buffer, options: { captureDepth?: number; chunk?: number; maxCaptureBytes?: number; maxDepth?: number; utf8?: boolean } = {}): Seen {
  const bytes = typeof input === 'string' ? Buffer.from(input) : input;
  const seen: Seen = { captured: [], tooLarge: [], left: [], failed: [], documents: 0 };
  const show = (path: readonly JsonPathSegment[]) => JSON.stringify(path);
  const handler: JsonScanHandler = {
    enter: (path): ScanDecision => (path.length >= (options.captureDepth ?? 2) ? 'capture' : 'descend'),
    leave: (path) => seen.left.push(show(path)),
    captured: (path, value, at, length) => {
      if (value === undefined) seen.tooLarge.push(show(path));
      else seen.captured.push({ path: show(path), value: JSON.parse(value.toString(options.utf8 === false ? 'latin1' : 'utf8')), line: at.line, offset: at.offset, length });
    },
    failed: (problem) => seen.failed.push(problem),
  };
  const scanner = new JsonScanner(handler, { maxCaptureBytes: options.maxCaptureBytes ?? 1 << 20, maxDepth: options.maxDepth ?? 64, utf8: options.utf8 ?? true });
  const size = options.chunk ?? bytes.length;
  for (let start = 0; start < bytes.length; start += size) scanner.push(bytes.subarray(start, start + size));
  seen.documents = scanner.end();
  return seen;
}

const pretty = JSON.stringify({ resourceSpans: [{ spans: [{ traceId: 't1', name: 'a "quoted" \\ name', n: -1.5e3, ok: true, none: null, nested: { list: [1, [2, { x: 'ü€😀' }]] } }, { traceId: 't2', 'key \\"with\\" escapes \u00e9': 'v' }] }], other: 'x' }, null, 2);

describe('JsonScanner', () => {
  it('captures the values at the chosen depth with their paths, lines and byte ranges, whatever the chunking', () => {
    const whole = scan(pretty, { captureDepth: 4 });
    expect(whole.failed).toEqual([]);
    expect(whole.documents).toBe(1);
    const document = JSON.parse(pretty) as { resourceSpans: Array<{ spans: Array<Record<string, unknown>> }> };
    expect(whole.captured.map((each) => each.value)).toEqual(document.resourceSpans[0].spans);
    expect(whole.captured.map((each) => each.path)).toEqual(['["resourceSpans",0,"spans",0]', '["resourceSpans",0,"spans",1]']);
    const bytes = Buffer.from(pretty);
    for (const each of whole.captured) {
      expect(JSON.parse(bytes.subarray(each.offset, each.offset + each.length).toString())).toEqual(each.value);
      expect(each.line).toBe(pretty.slice(0, bytes.subarray(0, each.offset).toString().length).split('\n').length);
    }
    expect(whole.left).toEqual(['["resourceSpans",0,"spans"]', '["resourceSpans",0]', '["resourceSpans"]', '[]']);
    // Split anywhere, even inside a multi-byte character, a key or an escape: the same result.
    for (const chunk of [1, 2, 3, 7, 64]) expect(scan(pretty, { captureDepth: 4, chunk })).toEqual(whole);
    // Keys with escapes are decoded; scalars are captured as well as containers.
    const fields = scan(pretty, { captureDepth: 5, chunk: 5 });
    expect(fields.captured.map((each) => each.path)).toContain(JSON.stringify(['resourceSpans', 0, 'spans', 1, 'key \\"with\\" escapes é']));
    expect(fields.captured.filter((each) => each.path.endsWith('"n"]')).map((each) => each.value)).toEqual([-1500]);
  });

  it('reads one document per line, and after an error resumes at the next line that opens a document', () => {
    const lines = ['{"a": [1, 2]}', '{"a": [3, oops]}', '{"a": [4]}', '{"a": [5,', '6]}', '{"a": "line', 'break"}', '{"a": [7]}'].join('\n');
    const seen = scan(lines, { captureDepth: 1, chunk: 4 });
    expect(seen.captured.map((each) => [each.value, each.line])).toEqual([[[1, 2], 1], [[4], 3], [[7], 8]]);
    expect(seen.failed).toEqual([
      { message: 'not valid JSON: unexpected "o"', line: 2, document: 2 },
      // Line 5 continues the document cut at line 4: skipped with it, not an error of its own.
      { message: 'the line ends inside its JSON document (the file holds one document per line)', line: 4, document: 4 },
      { message: 'not valid JSON: a line break inside a string', line: 6, document: 5 },
    ]);
  });

  it('names the line of bytes that are not UTF-8, fails that document and goes on; latin1 reads every byte', () => {
    const good = Buffer.from('{"a": 1}\n');
    const bad = Buffer.concat([Buffer.from('{"a": "caf'), Buffer.from([0xe9]), Buffer.from('"}\n')]);
    const input = Buffer.concat([good, bad, good, Buffer.from('{"a": "'), Buffer.from([0xe2, 0x82])]);
    for (const chunk of [1, 3, 1000]) {
      const seen = scan(input, { captureDepth: 1, chunk });
      expect(seen.captured.map((each) => [each.value, each.line])).toEqual([[1, 1], [1, 3]]);
      expect(seen.failed.map((each) => [each.line, each.message.slice(0, 20)])).toEqual([[2, 'not valid UTF-8 text'], [4, 'not valid UTF-8 text']]);
    }
    expect(scan(bad, { captureDepth: 1, utf8: false }).captured.map((each) => each.value)).toEqual(['caf\u00e9']);
  });

  it('reports a captured value over the byte limit by its path only, and refuses nesting past the depth limit', () => {
    const seen = scan('[{"small": 1}, {"big": "' + 'x'.repeat(100) + '"}, {"small": 2}]', { captureDepth: 1, maxCaptureBytes: 50, chunk: 16 });
    expect(seen.captured.map((each) => each.value)).toEqual([{ small: 1 }, { small: 2 }]);
    expect(seen.tooLarge).toEqual(['[1]']);
    const deep = scan(`${'['.repeat(10)}${']'.repeat(10)}`, { captureDepth: 99, maxDepth: 5 });
    expect(deep.failed).toEqual([{ message: 'nested deeper than 5 levels (the limit is --max-record-depth)', line: 1, document: 1 }]);
  });

  it('fails a document that is cut off, or followed by more text when it spans lines', () => {
    expect(scan('{\n  "a": [1,\n').failed).toEqual([{ message: 'the JSON document ends before it is complete', line: 3, document: 1 }]);
    expect(scan('{\n  "a": 1\n}\n{"b": 2}\n').failed).toEqual([{ message: 'not valid JSON: more text after the end of the document', line: 4 }]);
    expect(scan('').documents).toBe(0);
  });
});
