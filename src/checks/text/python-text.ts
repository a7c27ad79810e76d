/**
 * String primitives that behave like Python 3's `str` methods and `re` classes.
 * IFEval's checker is Python; its verdicts depend on Python's idea of whitespace,
 * word characters and case, which differ from JavaScript's at the edges
 * (e.g. `\x1c`, U+0085 and non-ASCII letters), so every check goes through these.
 */

/** Characters Python's `str.isspace()` and `re`'s `\s` accept, as a regex class body. */
export const PYTHON_WHITESPACE_CLASS =
  '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

/** Python `\w` for `str` patterns: letters, any numeric character, underscore. */
export const PYTHON_WORD_CLASS = '\\p{L}\\p{N}_';

/** Python `\d` for `str` patterns: decimal digits of any script. */
export const PYTHON_DIGIT_CLASS = '\\p{Nd}';

const whitespaceSet = new Set<string>();
for (const range of [
  [0x09, 0x0d],
  [0x1c, 0x20],
  [0x85, 0x85],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
]) {
  for (let code = range[0]; code <= range[1]; code += 1) whitespaceSet.add(String.fromCharCode(code));
}

export function isPythonWhitespace(character: string): boolean {
  return whitespaceSet.has(character);
}

/** `str.strip()` with no argument, or with a set of characters to remove. */
export function pythonStrip(text: string, characters?: string): string {
  return pythonRightStrip(pythonLeftStrip(text, characters), characters);
}

export function pythonLeftStrip(text: string, characters?: string): string {
  let start = 0;
  const matches = characters === undefined ? isPythonWhitespace : (character: string) => characters.includes(character);
  while (start < text.length && matches(text[start])) start += 1;
  return start === 0 ? text : text.slice(start);
}

export function pythonRightStrip(text: string, characters?: string): string {
  let end = text.length;
  const matches = characters === undefined ? isPythonWhitespace : (character: string) => characters.includes(character);
  while (end > 0 && matches(text[end - 1])) end -= 1;
  return end === text.length ? text : text.slice(0, end);
}

const whitespaceRunPattern = new RegExp(`[${PYTHON_WHITESPACE_CLASS}]+`, 'u');

/** `str.split()` with no argument: runs of whitespace separate, empty pieces dropped. */
export function pythonSplitWhitespace(text: string): string[] {
  return text.split(whitespaceRunPattern).filter((piece) => piece.length > 0);
}

const wordCharacterPattern = new RegExp(`[${PYTHON_WORD_CLASS}]`, 'u');
const asciiWordCharacter = new Uint8Array(128);
for (let code = 0; code < 128; code += 1) asciiWordCharacter[code] = wordCharacterPattern.test(String.fromCharCode(code)) ? 1 : 0;
const nonAsciiWordCharacter = new Map<number, boolean>();

function isWordCodePoint(code: number): boolean {
  if (code < 128) return asciiWordCharacter[code] === 1;
  let known = nonAsciiWordCharacter.get(code);
  if (known === undefined) {
    known = wordCharacterPattern.test(String.fromCodePoint(code));
    nonAsciiWordCharacter.set(code, known);
  }
  return known;
}

/** Number of `\w+` runs, as NLTK's `RegexpTokenizer(r"\w+")` counts words in IFEval. */
export function countWordRuns(text: string): number {
  let count = 0;
  let inWord = false;
  for (let index = 0; index < text.length; index += 1) {
    let code = text.charCodeAt(index);
    if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      code = text.codePointAt(index) ?? code;
      if (code > 0xffff) index += 1;
    }
    const word = isWordCodePoint(code);
    if (word && !inWord) count += 1;
    inWord = word;
  }
  return count;
}

const lowercaseOrTitle = /[\p{Lowercase}\p{Lt}]/u;
const uppercaseOrTitle = /[\p{Uppercase}\p{Lt}]/u;
const uppercase = /\p{Uppercase}/u;
const lowercase = /\p{Lowercase}/u;

/** `str.isupper()`: at least one cased character and no lowercase or titlecase one. */
export function pythonIsUpper(text: string): boolean {
  return !lowercaseOrTitle.test(text) && uppercase.test(text);
}

/** `str.islower()`: at least one cased character and no uppercase or titlecase one. */
export function pythonIsLower(text: string): boolean {
  return !uppercaseOrTitle.test(text) && lowercase.test(text);
}

/**
 * Compiles a pattern that IFEval passes to Python's `re` (keywords, section markers,
 * postscript markers). Most are plain words, so the JavaScript regex is the same; a
 * pattern JavaScript rejects is matched literally rather than failing the check.
 */
export function compilePythonPattern(source: string, flags: string): RegExp {
  try {
    return new RegExp(source, `${flags}u`);
  } catch {
    try {
      return new RegExp(source, flags);
    } catch {
      return new RegExp(escapeRegExp(source), `${flags}u`);
    }
  }
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** `len(re.findall(pattern, text))` for a pattern compiled with the `g` flag. */
export function countMatches(pattern: RegExp, text: string): number {
  let count = 0;
  pattern.lastIndex = 0;
  for (;;) {
    const match = pattern.exec(text);
    if (match === null) break;
    count += 1;
    // Python's findall moves past an empty match; so must we, or we loop forever.
    if (match[0].length === 0) pattern.lastIndex += 1;
  }
  pattern.lastIndex = 0;
  return count;
}
