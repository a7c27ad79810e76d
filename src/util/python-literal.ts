/**
 * Python literals as a pandas CSV export writes them (`str(list_of_dicts)`): strings in single
 * or double quotes with backslash escapes, numbers, True/False/None, nan/inf, lists, tuples and
 * dicts. A reader, not an evaluator: anything else is refused with the position it stops at.
 */
import type { ParseResult } from './json.js';

const simpleEscapes: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', v: '\v', '0': '\0', '\n': '' };

class PythonLiteralReader {
  private index = 0;
  constructor(private readonly text: string) {}

  read(): unknown {
    const value = this.value(0);
    this.skipSpace();
    if (this.index < this.text.length) this.fail('unexpected text after the value');
    return value;
  }

  private fail(message: string): never {
    throw new SyntaxError(`${message} at position ${this.index}`);
  }

  private skipSpace(): void {
    while (this.index < this.text.length && /\s/.test(this.text[this.index])) this.index += 1;
  }

  private value(depth: number): unknown {
    if (depth > 200) this.fail('nested too deeply');
    this.skipSpace();
    const char = this.text[this.index];
    if (char === '[') return this.sequence(']', depth);
    if (char === '(') return this.sequence(')', depth);
    if (char === '{') return this.dict(depth);
    if (char === "'" || char === '"') return this.string();
    // Adjacent string literals concatenate, as Python reads them; rare in reprs, but harmless.
    const word = /^(?:True|False|None|nan|inf|-inf)\b/.exec(this.text.slice(this.index, this.index + 5));
    if (word) {
      this.index += word[0].length;
      return { True: true, False: false, None: null, nan: Number.NaN, inf: Number.POSITIVE_INFINITY, '-inf': Number.NEGATIVE_INFINITY }[word[0]];
    }
    const number = /^[-+]?(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][-+]?\d+)?/.exec(this.text.slice(this.index, this.index + 64));
    if (number) {
      this.index += number[0].length;
      return Number(number[0].replace(/_/g, ''));
    }
    return this.fail('expected a value');
  }

  private sequence(close: string, depth: number): unknown[] {
    this.index += 1;
    const items: unknown[] = [];
    for (;;) {
      this.skipSpace();
      if (this.text[this.index] === close) {
        this.index += 1;
        return items;
      }
      items.push(this.value(depth + 1));
      this.skipSpace();
      if (this.text[this.index] === ',') this.index += 1;
      else if (this.text[this.index] !== close) this.fail(`expected "," or "${close}"`);
    }
  }

  private dict(depth: number): Record<string, unknown> {
    this.index += 1;
    const entries: Record<string, unknown> = {};
    for (;;) {
      this.skipSpace();
      if (this.text[this.index] === '}') {
        this.index += 1;
        return entries;
      }
      const key = this.value(depth + 1);
      if (typeof key !== 'string' && typeof key !== 'number') this.fail('a dict key must be a string or a number');
      this.skipSpace();
      if (this.text[this.index] !== ':') this.fail('expected ":"');
      this.index += 1;
      const value = this.value(depth + 1);
      // Defined as an own property, so a "__proto__" key is data, never the prototype.
      Object.defineProperty(entries, String(key), { value, enumerable: true, writable: true, configurable: true });
      this.skipSpace();
      if (this.text[this.index] === ',') this.index += 1;
      else if (this.text[this.index] !== '}') this.fail('expected "," or "}"');
    }
  }

  private string(): string {
    let result = '';
    while (this.text[this.index] === "'" || this.text[this.index] === '"') {
      result += this.oneString();
      this.skipSpace();
    }
    return result;
  }

  private oneString(): string {
    const quote = this.text[this.index];
    this.index += 1;
    let result = '';
    for (;;) {
      if (this.index >= this.text.length) this.fail('a string is never closed');
      const char = this.text[this.index];
      if (char === quote) {
        this.index += 1;
        return result;
      }
      if (char !== '\\') {
        result += char;
        this.index += 1;
        continue;
      }
      const next = this.text[this.index + 1];
      if (next in simpleEscapes) {
        result += simpleEscapes[next];
        this.index += 2;
        continue;
      }
      const width = next === 'x' ? 2 : next === 'u' ? 4 : next === 'U' ? 8 : 0;
      if (width > 0) {
        const hex = this.text.slice(this.index + 2, this.index + 2 + width);
        if (!new RegExp(`^[0-9a-fA-F]{${width}}$`).test(hex)) this.fail(`bad \\${next} escape`);
        result += String.fromCodePoint(Number.parseInt(hex, 16));
        this.index += 2 + width;
        continue;
      }
      // Python keeps an unknown escape as written (backslash included).
      result += char;
      this.index += 1;
    }
  }
}

/** Parses one Python literal; never throws. */
export function parsePythonLiteral(text: string): ParseResult<unknown> {
  try {
    return { ok: true, value: new PythonLiteralReader(text).read() };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}
