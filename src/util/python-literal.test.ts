import { describe, expect, it } from 'vitest';
import { decodeCsvCell } from './csv.js';
import { parsePythonLiteral } from './python-literal.js';

describe('parsePythonLiteral (pandas CSV cells)', () => {
  it('reads lists of dicts with both quote styles, escapes, numbers and constants', () => {
    const text = `[{'criterion': "It's clear", 'weight': 5.0, 'axis': 'Explicit\\nCriteria'}, {'criterion': 'caf\\xe9 \\u2014 ok', 'weight': -2, 'ok': True, 'x': None}, (1, 2.5e3)]`;
    expect(parsePythonLiteral(text)).toEqual({
      ok: true,
      value: [{ criterion: "It's clear", weight: 5, axis: 'Explicit\nCriteria' }, { criterion: 'café — ok', weight: -2, ok: true, x: null }, [1, 2500]],
    });
  });

  it('keeps a "__proto__" key as data', () => {
    const parsed = parsePythonLiteral(`{'__proto__': {'polluted': 1}}`);
    expect(parsed.ok).toBe(true);
    const value = (parsed as { value: Record<string, unknown> }).value;
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses what is not a literal, saying where', () => {
    expect(parsePythonLiteral("[{'a': os.system('x')}]")).toMatchObject({ ok: false, error: expect.stringMatching(/at position 7/) });
    expect(parsePythonLiteral("['open")).toMatchObject({ ok: false, error: expect.stringMatching(/never closed/) });
  });

  it('decodes structured CSV cells and leaves other text alone', () => {
    expect(decodeCsvCell(`[{'a': 1}]`)).toEqual([{ a: 1 }]);
    expect(decodeCsvCell('{"a": [1]}')).toEqual({ a: [1] });
    expect(decodeCsvCell('[see the appendix] for details')).toBe('[see the appendix] for details');
    expect(decodeCsvCell('plain text')).toBe('plain text');
  });
});
