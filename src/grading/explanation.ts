/**
 * How much the judge writes before each verdict. `full` is the templates' own one to three
 * sentences; `short` asks for one short sentence; `none` asks for the verdict alone, which a
 * local model answers with a single generated token (the rest of the JSON is forced).
 * Explanations are what a reader checks a verdict against, so `none` trades that detail for
 * speed; `short` keeps a reason at about a quarter of the output tokens.
 */
import { RubricateError } from '../errors.js';
import type { ExplanationLength } from '../spec/run-spec.js';
import type { Judge, JudgeRequest } from '../judges/types.js';
import { wrapJudge } from '../judges/middleware.js';

/** Where every template's reply-format sentence starts: the part this module rewrites. */
const replyRuleMarker = 'Reply with a JSON object and nothing else';

const replyRules = {
  binary: {
    short: `${replyRuleMarker}: {"explanation": "<one short sentence, at most 20 words>", "criteria_met": <true or false>}. Write the explanation before deciding.`,
    none: `${replyRuleMarker}: {"criteria_met": <true or false>}.`,
  },
  ordinal: {
    short: `${replyRuleMarker}: {"explanation": "<one short sentence, at most 20 words>", "choice": "<the label of exactly one listed choice>"}. Write the explanation before choosing.`,
    none: `${replyRuleMarker}: {"choice": "<the label of exactly one listed choice>"}.`,
  },
  batched: {
    short: `${replyRuleMarker}, with one entry per criterion id, keyed by that id: {"verdicts": {"<criterion id>": {"explanation": "<one short sentence, at most 20 words>", "criteria_met": <true or false>}, ...}}. For a criterion that lists choices, give {"explanation": "...", "choice": "<label of one listed choice>"} instead of criteria_met. Write each explanation before its verdict.`,
    none: `${replyRuleMarker}, with one entry per criterion id, keyed by that id: {"verdicts": {"<criterion id>": {"criteria_met": <true or false>}, ...}}. For a criterion that lists choices, give {"choice": "<label of one listed choice>"} instead of criteria_met.`,
  },
  listwise: {
    short: `${replyRuleMarker}: {"responses": [{"label": "<response label>", "verdicts": {"<criterion id>": {"explanation": "<one short sentence, at most 20 words>", "criteria_met": <true or false>}, ...}}, ...]}, with exactly one entry per response label and, in each, one verdict per criterion id. For a criterion that lists choices, give {"explanation": "...", "choice": "<label of one listed choice>"} instead of criteria_met. Write each explanation before its verdict.`,
    none: `${replyRuleMarker}: {"responses": [{"label": "<response label>", "verdicts": {"<criterion id>": {"criteria_met": <true or false>}, ...}}, ...]}, with exactly one entry per response label and, in each, one verdict per criterion id. For a criterion that lists choices, give {"choice": "<label of one listed choice>"} instead of criteria_met.`,
  },
} as const;

/** The template with its reply-format sentence (its last paragraph) rewritten for `length`. */
export function withExplanationRule(template: string, kind: keyof typeof replyRules, length: ExplanationLength): string {
  if (length === 'full') return template;
  const start = template.lastIndexOf(replyRuleMarker);
  if (start < 0) throw new RubricateError('INTERNAL', `a ${kind} grading template has no reply-format sentence to rewrite`);
  return template.slice(0, start) + replyRules[kind][length];
}

/** Template version with the explanation length, so cached replies of one length never answer another. */
export function explanationVersion(version: string, length: ExplanationLength): string {
  return length === 'full' ? version : `${version}+explanation-${length}`;
}

/** A verdict schema without its `explanation` field (for `none`); other lengths keep the schema. */
export function withoutExplanation(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = { ...(schema.properties as Record<string, unknown>) };
  delete properties.explanation;
  const required = Array.isArray(schema.required) ? (schema.required as string[]).filter((name) => name !== 'explanation') : schema.required;
  return { ...schema, properties, required };
}

// Benchmarks of the local judge: models with random weights write random text wherever the
// grammar leaves freedom, so their explanations are pinned to a length for comparable runs.

/** Characters an explanation is pinned to on random-weight models (≈ 60 and ≈ 15 English tokens). */
export const pinnedExplanationCharacters: Record<Exclude<ExplanationLength, 'none'>, number> = { full: 260, short: 60 };
/** Upper bound of a short explanation on real models. */
export const shortExplanationCharacters = 120;

/**
 * Rewrites a reply schema's `explanation` fields: removed for `none`, length-bounded for `short`,
 * and pinned to an exact length when `pinned` (random-weight models, so runs are comparable).
 */
export function explanationSchema(schema: unknown, length: ExplanationLength, pinned: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((entry) => explanationSchema(entry, length, pinned));
  if (schema === null || typeof schema !== 'object') return schema;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) result[key] = explanationSchema(value, length, pinned);
  const properties = result.properties;
  if (properties !== null && typeof properties === 'object' && Object.hasOwn(properties, 'explanation')) {
    const fields = { ...(properties as Record<string, unknown>) };
    if (length === 'none') {
      delete fields.explanation;
      if (Array.isArray(result.required)) result.required = (result.required as unknown[]).filter((name) => name !== 'explanation');
    } else if (pinned) {
      const characters = pinnedExplanationCharacters[length];
      fields.explanation = { type: 'string', minLength: characters, maxLength: characters };
    } else if (length === 'short') {
      fields.explanation = { type: 'string', maxLength: shortExplanationCharacters };
    }
    result.properties = fields;
  }
  return result;
}

/** A judge that applies `explanationSchema` to every request before the local model sees it. */
export function withExplanationLength(judge: Judge, length: ExplanationLength, pinned: boolean): Judge {
  if (length === 'full' && !pinned) return judge;
  return wrapJudge(judge, {
    transformRequest: (request: JudgeRequest) =>
      request.output ? { ...request, output: { ...request.output, schema: explanationSchema(request.output.schema, length, pinned) as Record<string, unknown> } } : request,
  });
}
