/**
 * JSON answers whose rewards Python reads as floats. `JSON.stringify(1)` is `1`, which
 * Python's `json` turns into an `int`; a step where every reward is 0 or 1 then becomes an
 * int64 tensor, and `rewards.mean()` / `.std()` raise in the trainer (OpenRLHF). Numbers under
 * the keys named here (and in arrays under them, and in objects under them such as
 * OpenRLHF's `extra_logs`) are written with a decimal point: `1.0`, `0.0`, `-0.5`.
 */
import type { Context } from 'hono';

/** Keys whose numbers are rewards, scores or their breakdowns. */
const floatKeys: ReadonlySet<string> = new Set([
  'reward',
  'rewards',
  'score',
  'scores',
  'advantages',
  'raw_rewards',
  'axes',
  'terms',
  'extra_logs',
  'reward_failed',
  'criteria_met_fraction',
  'reward_components',
  'reward_weights',
]);

/** `"key":` for each float key; such a key followed by a quote-colon cannot occur inside a JSON string (its quotes are escaped there). */
const keyPatternOf = new WeakMap<ReadonlySet<string>, RegExp>();

function floatKeyPattern(keys: ReadonlySet<string>): RegExp {
  let pattern = keyPatternOf.get(keys);
  if (!pattern) {
    const names = [...keys].map((key) => JSON.stringify(key).slice(1, -1).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
    pattern = new RegExp(`"(?:${names})":`, 'g');
    keyPatternOf.set(keys, pattern);
  }
  return pattern;
}

const quote = 34;
const backslash = 92;

/** Index just past the string that opens at `start` (a quote); the text's end bounds every scan here. */
function stringEnd(text: string, start: number): number {
  let index = start + 1;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (code === backslash) index += 2;
    else if (code === quote) return index + 1;
    else index += 1;
  }
  return text.length;
}

/** Index just past the JSON value that starts at `start` in JSON.stringify's output (no white space). */
function valueEnd(text: string, start: number): number {
  const first = text[start];
  if (first === '"') return stringEnd(text, start);
  if (first !== '{' && first !== '[') {
    let index = start;
    while (index < text.length && text[index] !== ',' && text[index] !== '}' && text[index] !== ']') index += 1;
    return index;
  }
  let depth = 0;
  let index = start;
  while (index < text.length) {
    const character = text[index];
    if (character === '"') {
      index = stringEnd(text, index);
      continue;
    }
    if (character === '{' || character === '[') depth += 1;
    else if ((character === '}' || character === ']') && (depth -= 1) === 0) return index + 1;
    index += 1;
  }
  return text.length;
}

const isNumberStart = (character: string) => character === '-' || (character >= '0' && character <= '9');
const isNumberPart = (character: string) => (character >= '0' && character <= '9') || character === '.' || character === 'e' || character === 'E' || character === '+' || character === '-';

/**
 * `text[start, end)` with each integer outside strings written with a point (`1` → `1.0`),
 * or undefined when it has none. JSON.stringify writes integers below 1e21 as bare digits
 * and everything else with a point or an exponent, which stays as it is.
 */
function floatsIn(text: string, start: number, end: number): string | undefined {
  let out: string | undefined;
  let copied = start;
  let index = start;
  while (index < end) {
    const character = text[index];
    if (character === '"') {
      index = stringEnd(text, index);
      continue;
    }
    if (!isNumberStart(character)) {
      index += 1;
      continue;
    }
    let integer = true;
    let after = index + 1;
    for (; after < end && isNumberPart(text[after]); after += 1) if (text[after] === '.' || text[after] === 'e' || text[after] === 'E') integer = false;
    if (integer) {
      out = (out ?? '') + text.slice(copied, after) + '.0';
      copied = after;
    }
    index = after;
  }
  return out === undefined ? undefined : out + text.slice(copied, end);
}

/**
 * JSON text of `value` with the numbers under `keys` (at any depth, and everything inside an
 * array or object under them) written as floats. JSON.stringify writes the value once (several
 * times faster than walking it here); then each float key's value is found in the text and
 * only its integers get their `.0`.
 */
export function stringifyWithFloatRewards(value: unknown, keys: ReadonlySet<string> = floatKeys): string {
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) return 'null';
  const pattern = floatKeyPattern(keys);
  pattern.lastIndex = 0;
  let out = '';
  let copied = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const start = match.index + match[0].length;
    const end = valueEnd(text, start);
    const rewritten = floatsIn(text, start, end);
    if (rewritten !== undefined) {
      out += text.slice(copied, start) + rewritten;
      copied = end;
    }
    pattern.lastIndex = end;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** A JSON response with float rewards (see the module comment). */
export function floatJson(context: Context, value: unknown, status = 200): Response {
  return context.body(stringifyWithFloatRewards(value), status as 200, { 'content-type': 'application/json; charset=UTF-8' });
}
