/**
 * Reading a judge's reply. The JSON may come bare, in a code fence, after reasoning, or
 * slightly broken; we recover what was clearly written and refuse everything else. A
 * reply we cannot read is a JUDGE_UNPARSEABLE error, never a "not met".
 */
import { jsonrepair } from 'jsonrepair';
import { RubricateError } from '../errors.js';
import type { JudgeReply } from '../judges/types.js';
import { canonicalJson, safeParseJson, topLevelJsonObjects } from '../util/json.js';

const fencedBlock = /```(?:json|JSON)?\s*\n?([\s\S]*?)```/;

export type ExtractResult = { ok: true; value: unknown } | { ok: false; reason: string };

/**
 * The answer part of a reply, without its thinking: what follows the last `</think>`, which
 * covers a whole `<think>…</think>` block and a block the chat template opened (R1 distills,
 * QwQ: the reply holds only the closing tag). A `<think>` never closed is thinking cut off.
 */
export function finalAnswerText(text: string): string {
  const lower = text.toLowerCase();
  const close = lower.lastIndexOf('</think>');
  if (close !== -1) return text.slice(close + '</think>'.length);
  const open = lower.indexOf('<think>');
  return open === -1 ? text : text.slice(0, open);
}

/**
 * Why an answer that writes several JSON objects cannot be read, if it does: two objects that
 * differ (`{"criteria_met": true} {"criteria_met": false}`) contradict each other, and taking
 * either would be a guess; the same object written twice is one answer.
 */
function contradictoryObjects(found: { values: unknown[]; unclosed: boolean }): string | undefined {
  const distinct = new Set(found.values.map((value) => canonicalJson(value)));
  if (distinct.size > 1) return `ambiguous reply: it holds ${distinct.size} different JSON objects, not one answer`;
  if (distinct.size === 1 && found.unclosed) return 'ambiguous reply: another JSON object follows the answer, unfinished';
  return undefined;
}

/**
 * The first key that appears twice in one object of a JSON text, if any. JSON.parse keeps the
 * last value, so `{"criteria_met": true, "criteria_met": false}` would silently read as false:
 * such a reply is ambiguous, and is retried then reported instead.
 */
export function duplicateJsonKey(text: string): string | undefined {
  const frames: Array<{ keys: Set<string> | undefined; expectKey: boolean }> = [];
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index];
    if (character === '"') {
      let end = index + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const frame = frames[frames.length - 1];
      if (frame?.keys && frame.expectKey) {
        const key = jsonKeyText(text.slice(index, end + 1));
        if (frame.keys.has(key)) return key;
        frame.keys.add(key);
        frame.expectKey = false;
      }
      index = end;
    } else if (character === '{') frames.push({ keys: new Set(), expectKey: true });
    else if (character === '[') frames.push({ keys: undefined, expectKey: false });
    else if (character === '}' || character === ']') frames.pop();
    else if (character === ',') {
      const frame = frames[frames.length - 1];
      if (frame?.keys) frame.expectKey = true;
    }
  }
  return undefined;
}

/** A closed JSON string without escapes or control characters: its text is what it says (the common key). */
function isPlainJsonString(raw: string): boolean {
  if (raw.length < 2 || raw.charCodeAt(raw.length - 1) !== 0x22) return false;
  for (let index = 1; index < raw.length - 1; index += 1) {
    const code = raw.charCodeAt(index);
    if (code < 0x20 || code === 0x5c) return false;
  }
  return true;
}

/** The key a quoted JSON string names, or its raw text when it is no valid JSON string. */
function jsonKeyText(raw: string): string {
  if (isPlainJsonString(raw)) return raw.slice(1, -1);
  const parsed = safeParseJson(raw);
  return parsed.ok && typeof parsed.value === 'string' ? parsed.value : raw;
}

/** A parsed value, unless its text repeats a key in one object (then the reply is ambiguous). */
function unambiguous(text: string, value: unknown): ExtractResult {
  const repeated = duplicateJsonKey(text);
  if (repeated !== undefined) return { ok: false, reason: `ambiguous reply: the key ${JSON.stringify(repeated)} appears twice in one object` };
  return { ok: true, value };
}

/** Finds the JSON value a judge meant to give. */
export function extractJson(text: string): ExtractResult {
  let body = finalAnswerText(text).trim();
  if (body === '') return { ok: false, reason: 'empty reply' };
  const direct = safeParseJson(body);
  if (direct.ok) return unambiguous(body, direct.value);
  // Several answers in one reply (in fences, prose or side by side) are refused, whichever mode asked.
  const contradiction = contradictoryObjects(topLevelJsonObjects(body));
  if (contradiction) return { ok: false, reason: contradiction };
  const fence = fencedBlock.exec(body);
  if (fence) {
    const fenced = safeParseJson(fence[1].trim());
    if (fenced.ok) return unambiguous(fence[1], fenced.value);
    body = fence[1].trim();
  }
  const start = body.indexOf('{');
  if (start === -1) return { ok: false, reason: 'no JSON object in reply' };
  const end = body.lastIndexOf('}');
  if (end > start) {
    const sliced = safeParseJson(body.slice(start, end + 1));
    if (sliced.ok) return unambiguous(body.slice(start, end + 1), sliced.value);
    const [only] = topLevelJsonObjects(body).values;
    if (only !== undefined) return unambiguous(body, only);
  }
  // Last resort for near-JSON (single quotes, trailing commas, a missing final brace).
  // Whatever comes out is still validated field by field by the caller.
  try {
    const repaired = safeParseJson(jsonrepair(body.slice(start)));
    if (repaired.ok) return { ok: true, value: repaired.value };
    return { ok: false, reason: `invalid JSON: ${repaired.error}` };
  } catch (error) {
    return { ok: false, reason: `invalid JSON: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}` };
  }
}

/** A boolean the judge clearly wrote; strings `true`/`false` are accepted, nothing else. */
export function readBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    const normalized = value.trim().toLowerCase();
    if (normalized === 'true') return true;
    if (normalized === 'false') return false;
  }
  return undefined;
}

export function unparseable(reason: string, text: string): RubricateError {
  const excerpt = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return new RubricateError('JUDGE_UNPARSEABLE', `${reason}; reply was: ${JSON.stringify(excerpt)}`);
}

/** A reply cut off by its token budget: retryable, or final when the budget was already the model's own limit. */
export function truncatedReply(reply: Pick<JudgeReply, 'finishReason' | 'atOutputLimit' | 'text'>): RubricateError | undefined {
  if (reply.finishReason === 'length' && reply.atOutputLimit) {
    return new RubricateError(
      'JUDGE_OUTPUT_LIMIT',
      "reply cut off at the model's output limit even at the largest budget it allows: grade fewer criteria per call, or think less (--reasoning-effort low, or turn thinking off)",
    );
  }
  if (reply.finishReason === 'length') {
    return unparseable('reply cut off at the max-tokens limit (raise --max-tokens)', reply.text);
  }
  return undefined;
}
