import { describe, expect, it } from 'vitest';
import { jsonStringWithSharedPrefix, parseInputJson } from './json.js';

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

describe('jsonStringWithSharedPrefix', () => {
  const pieces = ['a', '"', '\\', '\n', '\u0000', '\u001f', '\u2028', 'é', '\ud83d', '\ude00', '\ud83d\ude00', '<', ' '];

  it('gives the bytes of JSON.stringify for every cut of texts with escapes and whole or lone surrogates', () => {
    let seed = 7;
    const next = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
    for (let round = 0; round < 300; round += 1) {
      const text = Array.from({ length: 1 + Math.floor(next() * 12) }, () => pieces[Math.floor(next() * pieces.length)]).join('');
      for (let cut = 0; cut <= text.length + 1; cut += 1) {
        // Twice: the second call reads the prefix back from the ring.
        expect(jsonStringWithSharedPrefix(text, cut)).toBe(JSON.stringify(text));
        expect(jsonStringWithSharedPrefix(text, cut)).toBe(JSON.stringify(text));
      }
    }
  });

  it('does not take another text\'s prefix of the same length for its own', () => {
    expect(jsonStringWithSharedPrefix('<a>\nfirst', 4)).toBe(JSON.stringify('<a>\nfirst'));
    expect(jsonStringWithSharedPrefix('<b>"second', 4)).toBe(JSON.stringify('<b>"second'));
    expect(jsonStringWithSharedPrefix('<a>\nthird', 4)).toBe(JSON.stringify('<a>\nthird'));
  });

  it('keeps a surrogate pair cut by the prefix whole, as JSON.stringify does', () => {
    const text = 'x\ud83d\ude00y';
    expect(jsonStringWithSharedPrefix(text, 2)).toBe(JSON.stringify(text));
    expect(jsonStringWithSharedPrefix(text, 2)).not.toContain('\\u');
  });
});
