/** JSON helpers that never throw on untrusted text: errors come back as data. */
import { inputLimits } from './input-limits.js';

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

export function safeParseJson(text: string): ParseResult<unknown> {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Serialises with object keys sorted at every level and no whitespace, so equal values
 * always give equal bytes (hashing, cache keys). `undefined` members are dropped, as JSON does.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError('canonicalJson: non-finite number');
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) return `[${value.map((entry) => (entry === undefined ? 'null' : canonicalJson(entry))).join(',')}]`;
  const keys = Object.keys(value as Record<string, unknown>).sort();
  const members: string[] = [];
  for (const key of keys) {
    const member = (value as Record<string, unknown>)[key];
    if (member === undefined) continue;
    members.push(`${JSON.stringify(key)}:${canonicalJson(member)}`);
  }
  return `{${members.join(',')}}`;
}

/**
 * Deepest nesting of objects and arrays in JSON text, counted without parsing (so a hostile
 * record cannot exhaust the stack first); stops counting once past `limit`.
 */
export function jsonNestingDepth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 92) index += 1; // backslash: skip the escaped character
      else if (code === 34) inString = false;
      continue;
    }
    if (code === 34) inString = true;
    else if (code === 123 || code === 91) {
      depth += 1;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (code === 125 || code === 93) depth -= 1;
  }
  return deepest;
}

/** Whether the text holds more than `limit` of `{` and `[` (counted anywhere, strings too). indexOf is far faster than a loop over characters. */
function openingBracketsExceed(text: string, limit: number): boolean {
  let count = 0;
  for (const bracket of ['{', '[']) {
    for (let index = text.indexOf(bracket); index !== -1; index = text.indexOf(bracket, index + 1)) {
      count += 1;
      if (count > limit) return true;
    }
  }
  return false;
}

/**
 * Parses one input record (a JSONL line, a JSON file, a request body): like `safeParseJson`,
 * and a record nested deeper than `maxDepth` is refused before it is parsed.
 */
export function parseInputJson(text: string, maxDepth = inputLimits().maxDepth): ParseResult<unknown> {
  // A text shorter than the limit, or with fewer brackets than it, cannot nest deeper than it.
  if (text.length > maxDepth && openingBracketsExceed(text, maxDepth) && jsonNestingDepth(text, maxDepth) > maxDepth) {
    return { ok: false, error: `nested deeper than ${maxDepth} levels (the limit is --max-record-depth)` };
  }
  return safeParseJson(text);
}
