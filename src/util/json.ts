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

/**
 * The top-level `{…}` spans of a text that parse, in order (values and where each starts), and
 * whether an object is left open at the end (a second answer cut off, or near-JSON missing its final brace).
 */
export function topLevelJsonObjects(text: string): { values: unknown[]; starts: number[]; unclosed: boolean } {
  const values: unknown[] = [];
  const starts: number[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index];
    if (depth > 0 && inString) {
      if (character === '\\') index += 1;
      else if (character === '"') inString = false;
      continue;
    }
    if (character === '{') {
      if (depth === 0) start = index;
      depth += 1;
    } else if (character === '}' && depth > 0) {
      depth -= 1;
      if (depth === 0) {
        const parsed = safeParseJson(text.slice(start, index + 1));
        if (parsed.ok) {
          values.push(parsed.value);
          starts.push(start);
        }
      }
    } else if (character === '"' && depth > 0) inString = true;
  }
  return { values, starts, unclosed: depth > 0 };
}

/**
 * Thinking that runs into the answer with nothing between them (a reasoning parser that never saw
 * the end of the thinking puts both in its reasoning field): the answer is the last JSON object
 * and what follows it; the objects before it are the thinking's drafts. Undefined without one.
 */
export function answerAfterThinking(text: string): string | undefined {
  const { starts } = topLevelJsonObjects(text);
  return starts.length > 0 ? text.slice(starts[starts.length - 1]) : undefined;
}
