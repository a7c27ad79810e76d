/**
 * Reading a judge's reply. The JSON may come bare, in a code fence, after reasoning, or
 * slightly broken; we recover what was clearly written and refuse everything else. A
 * reply we cannot read is a JUDGE_UNPARSEABLE error, never a "not met".
 */
import { jsonrepair } from 'jsonrepair';
import { RubricateError } from '../errors.js';
import { safeParseJson } from '../util/json.js';

const thinkBlock = /<think>[\s\S]*?<\/think>/gi;
const fencedBlock = /```(?:json|JSON)?\s*\n?([\s\S]*?)```/;

export type ExtractResult = { ok: true; value: unknown } | { ok: false; reason: string };

/** Finds the JSON value a judge meant to give. */
export function extractJson(text: string): ExtractResult {
  let body = text.replace(thinkBlock, '').trim();
  if (body === '') return { ok: false, reason: 'empty reply' };
  const direct = safeParseJson(body);
  if (direct.ok) return { ok: true, value: direct.value };
  const fence = fencedBlock.exec(body);
  if (fence) {
    const fenced = safeParseJson(fence[1].trim());
    if (fenced.ok) return { ok: true, value: fenced.value };
    body = fence[1].trim();
  }
  const start = body.indexOf('{');
  if (start === -1) return { ok: false, reason: 'no JSON object in reply' };
  const end = body.lastIndexOf('}');
  if (end > start) {
    const sliced = safeParseJson(body.slice(start, end + 1));
    if (sliced.ok) return { ok: true, value: sliced.value };
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

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
