import { describe, expect, it } from 'vitest';
import { parseInputJson } from './json.js';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('parseInputJson', () => {
  it('parses up to the nesting limit and refuses one level more before parsing', () => {
    expect(parseInputJson(nested(64), 64)).toMatchObject({ ok: true });
    expect(parseInputJson(nested(65), 64)).toEqual({ ok: false, error: 'nested deeper than 64 levels (the limit is --max-record-depth)' });
    expect(parseInputJson(`{"a":${nested(65)}}`, 64)).toMatchObject({ ok: false });
  });

  it('counts nesting, not brackets: many shallow ones and brackets inside strings are fine', () => {
    const wide = JSON.stringify({ list: Array.from({ length: 200 }, (_, index) => ({ index })), text: '[[[[{{{{'.repeat(40) });
    const parsed = parseInputJson(wide, 4);
    expect(parsed).toEqual({ ok: true, value: JSON.parse(wide) });
  });

  it('reports invalid JSON as data', () => {
    expect(parseInputJson('{"a": ', 64)).toMatchObject({ ok: false, error: expect.stringMatching(/JSON/) });
  });
});
