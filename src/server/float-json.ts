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

function floatText(value: number): string {
  if (!Number.isFinite(value)) return 'null';
  const text = JSON.stringify(value);
  // Integers print without a point (and without an exponent below 1e21): add one.
  return /^-?\d+$/.test(text) ? `${text}.0` : text;
}

function write(value: unknown, asFloat: boolean, keys: ReadonlySet<string>): string {
  if (typeof value === 'number') return asFloat ? floatText(value) : JSON.stringify(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return write((value as { toJSON(): unknown }).toJSON(), asFloat, keys);
  if (Array.isArray(value)) return `[${value.map((entry) => (entry === undefined || typeof entry === 'function' ? 'null' : write(entry, asFloat, keys))).join(',')}]`;
  const parts: string[] = [];
  for (const [key, entry] of Object.entries(value)) {
    if (entry === undefined || typeof entry === 'function') continue;
    parts.push(`${JSON.stringify(key)}:${write(entry, asFloat || keys.has(key), keys)}`);
  }
  return `{${parts.join(',')}}`;
}

interface FloatPatterns {
  /** A float key holding an array or object: the answer goes the general way. */
  composite: RegExp;
  /** A float key holding an integer: `"reward":1` → `"reward":1.0`. */
  integer: RegExp;
}

const patternsOf = new WeakMap<ReadonlySet<string>, FloatPatterns>();

function floatPatterns(keys: ReadonlySet<string>): FloatPatterns {
  let patterns = patternsOf.get(keys);
  if (!patterns) {
    const names = [...keys].map((key) => JSON.stringify(key).slice(1, -1).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
    patterns = { composite: new RegExp(`"(?:${names})":[\\[{]`), integer: new RegExp(`("(?:${names})":-?\\d+)(?=[,}])`, 'g') };
    patternsOf.set(keys, patterns);
  }
  return patterns;
}

/**
 * JSON text of `value` with the numbers under `keys` written as floats. Most answers hold
 * rewards as plain numbers: JSON.stringify writes them (several times faster than walking the
 * value here), then each integer right after a float key gets its `.0`. Such a key followed by
 * a quote-colon cannot occur inside a JSON string (its quotes are escaped there), so the
 * rewrite only touches keys. Answers with arrays or objects under a float key (`rewards`,
 * `extra_logs`) take the general path.
 */
export function stringifyWithFloatRewards(value: unknown, keys: ReadonlySet<string> = floatKeys): string {
  const patterns = floatPatterns(keys);
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) return 'null';
  if (patterns.composite.test(text)) return writeParts(value, keys, patterns);
  return text.replace(patterns.integer, '$1.0');
}

/**
 * A value holding a float key with an array or object under it (every reward result has
 * `reward_components`): plain objects and arrays are written part by part, each part outside
 * a float key the fast way above, so only the small float subtrees are walked by `write`.
 */
function writeParts(value: unknown, keys: ReadonlySet<string>, patterns: FloatPatterns): string {
  if (value === null || typeof value !== 'object' || typeof (value as { toJSON?: unknown }).toJSON === 'function') return write(value, false, keys);
  if (Array.isArray(value)) return `[${value.map((entry) => (entry === undefined || typeof entry === 'function' ? 'null' : fastPart(entry, keys, patterns))).join(',')}]`;
  const parts: string[] = [];
  for (const [key, entry] of Object.entries(value)) {
    if (entry === undefined || typeof entry === 'function') continue;
    parts.push(`${JSON.stringify(key)}:${keys.has(key) ? write(entry, true, keys) : fastPart(entry, keys, patterns)}`);
  }
  return `{${parts.join(',')}}`;
}

function fastPart(value: unknown, keys: ReadonlySet<string>, patterns: FloatPatterns): string {
  if (value === null || typeof value !== 'object') return write(value, false, keys);
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) return 'null';
  if (patterns.composite.test(text)) return writeParts(value, keys, patterns);
  return text.replace(patterns.integer, '$1.0');
}

/** A JSON response with float rewards (see the module comment). */
export function floatJson(context: Context, value: unknown, status = 200): Response {
  return context.body(stringifyWithFloatRewards(value), status as 200, { 'content-type': 'application/json; charset=UTF-8' });
}
