import { describe, expect, it } from 'vitest';
import { numpyRound, pythonFloatRepr } from './reference-math.js';

describe('numpyRound', () => {
  it('rounds exact halves to even, like NumPy', () => {
    expect(numpyRound(0.25, 1)).toBe(0.2);
    expect(numpyRound(2.5, 0)).toBe(2);
    expect(numpyRound(3.5, 0)).toBe(4);
    expect(numpyRound(-2.5, 0)).toBe(-2);
  });

  it('scales before rounding, so 0.35 (stored just below) still rounds up as NumPy does', () => {
    expect(numpyRound(0.35, 1)).toBe(0.4);
    expect(numpyRound(-33.333333, 1)).toBe(-33.3);
    expect(numpyRound(62.5 - 83.3, 3)).toBe(-20.8);
  });
});

describe('pythonFloatRepr', () => {
  it.each([
    [95, '95.0'],
    [100, '100.0'],
    [0, '0.0'],
    [64.81481481481481, '64.81481481481481'],
    [58.333333333333336, '58.333333333333336'],
    [-2.5, '-2.5'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [1.5e-7, '1.5e-07'],
    [1e16, '1e+16'],
    [123456789012345680, '1.2345678901234568e+17'],
    [1234.5, '1234.5'],
  ])('%d → %s', (value, expected) => {
    expect(pythonFloatRepr(value)).toBe(expected);
  });
});
