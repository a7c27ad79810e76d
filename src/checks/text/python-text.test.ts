import { describe, expect, it } from 'vitest';
import { countWordRuns, pythonIsLower, pythonIsUpper, pythonSplitWhitespace, pythonStrip } from './python-text.js';

describe('Python string semantics', () => {
  it('strips the whitespace Python strips, including \\x1c and U+0085 but not U+FEFF', () => {
    expect(pythonStrip('\x1c\u0085 text \u3000')).toBe('text');
    expect(pythonStrip('\ufefftext')).toBe('\ufefftext');
    expect(pythonStrip('**bold**', '*')).toBe('bold');
  });

  it('splits on runs of whitespace and drops empty pieces', () => {
    expect(pythonSplitWhitespace('  a\tb\n\nc  ')).toEqual(['a', 'b', 'c']);
  });

  it('counts \\w+ runs with Unicode letters and digits', () => {
    expect(countWordRuns("It's 3.5 km—naïve café_bar!")).toBe(7);
    expect(countWordRuns('')).toBe(0);
    expect(countWordRuns('Привет, мир 😀 123')).toBe(3);
  });

  it('implements isupper/islower: cased characters decide, uncased ones are ignored', () => {
    expect(pythonIsUpper('HELLO, WORLD! 123')).toBe(true);
    expect(pythonIsUpper('HELLO, World')).toBe(false);
    expect(pythonIsUpper('123 !!!')).toBe(false);
    expect(pythonIsLower('hello, world 123')).toBe(true);
    expect(pythonIsLower('hello, World')).toBe(false);
    expect(pythonIsLower('ǅ')).toBe(false);
  });
});
