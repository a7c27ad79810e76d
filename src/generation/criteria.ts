/**
 * From the generator's answer to a rubric: read and validate the criteria list (zod), then
 * turn each criterion into rubric form: points from its importance, a tag, and a check kept
 * only when the check registry accepts it.
 */
import { z } from 'zod';
import { normalizeRubric } from '../rubric/normalize.js';
import type { CheckSpec, Criterion, CriterionInput, Rubric } from '../rubric/schema.js';
import { resolveProposedCheck } from './check-catalogue.js';
import type { ReadResult } from './generator-call.js';
import { importanceLevels, importanceTag, type Importance, type ImportancePoints } from './importance.js';

export interface ProposedCheck {
  type: string;
  parameters_json?: unknown;
  parameters?: unknown;
}

export interface GeneratedCriterion {
  text: string;
  importance: Importance;
  kind: 'hard_rule' | 'principle';
  check: ProposedCheck | null;
}

const importanceSchema = z
  .string()
  .transform((value) => importanceLevels.find((level) => level.toLowerCase() === value.trim().toLowerCase()) ?? value)
  .pipe(z.enum(importanceLevels));

const kindSchema = z
  .string()
  .transform((value) => value.trim().toLowerCase().replace(/[\s-]+/g, '_'))
  .pipe(z.enum(['hard_rule', 'principle']));

const proposedCheckSchema = z.looseObject({
  type: z.string().trim().min(1),
  parameters_json: z.unknown().optional(),
  parameters: z.unknown().optional(),
});

const generatedCriterionSchema = z.object({
  text: z.string().trim().min(1, 'criterion text is empty').max(1000, 'criterion text is longer than 1000 characters'),
  importance: importanceSchema,
  kind: kindSchema,
  check: z.union([z.null(), proposedCheckSchema]).optional().transform((value) => value ?? null),
});

const answerSchema = z.object({ criteria: z.array(generatedCriterionSchema) });

/** Text as compared for duplicates: case, spacing and final punctuation do not count. */
export function comparableText(text: string): string {
  return text
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[\s.;:!]+$/, '')
    .trim();
}

export interface ReadCriteriaOptions {
  minItems: number;
  maxItems: number;
}

/** Validates a `{criteria: [...]}` answer; exact duplicates are dropped before counting. */
export function readCriteriaAnswer(value: unknown, options: ReadCriteriaOptions): ReadResult<GeneratedCriterion[]> {
  const parsed = answerSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue.path.map(String).join('.');
    return { ok: false, reason: `answer does not follow the schema: ${path ? `${path}: ` : ''}${issue.message}` };
  }
  const seen = new Set<string>();
  const criteria: GeneratedCriterion[] = [];
  for (const criterion of parsed.data.criteria) {
    const key = comparableText(criterion.text);
    if (seen.has(key)) continue;
    seen.add(key);
    criteria.push(criterion);
  }
  if (criteria.length < options.minItems) {
    return { ok: false, reason: `answer has ${criteria.length} distinct criteria; at least ${options.minItems} are required` };
  }
  if (criteria.length > options.maxItems) {
    return { ok: false, reason: `answer has ${criteria.length} criteria; at most ${options.maxItems} are allowed` };
  }
  return { ok: true, value: criteria };
}

export interface CheckTally {
  proposed: number;
  kept: number;
  rejected: number;
}

export interface CriteriaConversion {
  criteria: CriterionInput[];
  warnings: string[];
  checks: CheckTally;
}

export interface ConvertCriteriaOptions {
  importancePoints: ImportancePoints;
  /** The registry's validator by default; tests may pass their own. */
  validateCheck?: Parameters<typeof resolveProposedCheck>[1];
}

/** Generator criteria → rubric criterion inputs, with a warning for every check that was dropped. */
export function convertCriteria(generated: readonly GeneratedCriterion[], options: ConvertCriteriaOptions): CriteriaConversion {
  const warnings: string[] = [];
  const checks: CheckTally = { proposed: 0, kept: 0, rejected: 0 };
  const criteria = generated.map((entry): CriterionInput => {
    let kind = entry.kind;
    if (entry.importance === 'Pitfall' && kind === 'hard_rule') {
      // A failed hard rule gates the item; for a Pitfall "met" is the bad outcome, so it can only be a principle.
      kind = 'principle';
    }
    const criterion: CriterionInput = {
      text: entry.text,
      points: options.importancePoints[entry.importance],
      tags: [importanceTag(entry.importance)],
      kind,
      metadata: { importance: entry.importance },
    };
    if (entry.check) {
      checks.proposed += 1;
      if (entry.importance === 'Pitfall') {
        checks.rejected += 1;
        warnings.push(`check "${entry.check.type}" dropped from Pitfall "${shorten(entry.text)}": Pitfalls are judged, not checked`);
      } else {
        const outcome = resolveProposedCheck(entry.check, options.validateCheck);
        if (outcome.ok) {
          checks.kept += 1;
          criterion.check = outcome.check as CheckSpec;
          criterion.kind = 'hard_rule';
        } else {
          checks.rejected += 1;
          // The criterion stays, graded by the judge as a hard rule.
          criterion.kind = 'hard_rule';
          warnings.push(`check dropped from "${shorten(entry.text)}" (judged instead): ${outcome.reason}`);
        }
      }
    }
    return criterion;
  });
  return { criteria, warnings, checks };
}

export interface BuildRubricOptions extends ConvertCriteriaOptions {
  id?: string;
  gate?: boolean;
  metadata?: Record<string, unknown>;
}

export interface BuiltRubric {
  rubric: Rubric;
  warnings: string[];
  checks: CheckTally;
}

/** A validated, normalised rubric (stable criterion ids derived from the text). */
export function buildRubric(generated: readonly GeneratedCriterion[], options: BuildRubricOptions): BuiltRubric {
  const conversion = convertCriteria(generated, options);
  return { rubric: rubricFromInputs(conversion.criteria, options), warnings: conversion.warnings, checks: conversion.checks };
}

export function rubricFromInputs(criteria: readonly CriterionInput[], options: Pick<BuildRubricOptions, 'id' | 'gate' | 'metadata'> = {}): Rubric {
  return normalizeRubric({
    ...(options.id !== undefined ? { id: options.id } : {}),
    criteria,
    ...(options.gate ? { gate: 'hard_rules' } : {}),
    ...(options.metadata ? { metadata: options.metadata } : {}),
  });
}

/** A criterion back in input form (for editing a rubric and normalising it again). */
export function criterionToInput(criterion: Criterion): CriterionInput {
  const input: CriterionInput = { id: criterion.id, text: criterion.text, points: criterion.points, tags: [...criterion.tags], kind: criterion.kind };
  if (criterion.scale) input.scale = criterion.scale;
  if (criterion.check) input.check = criterion.check;
  if (criterion.subchecks) {
    input.subchecks = criterion.subchecks;
    input.subcheckRule = criterion.subcheckRule;
    if (criterion.subcheckPenalty !== undefined) input.subcheckPenalty = criterion.subcheckPenalty;
  }
  if (criterion.turn !== undefined) input.turn = criterion.turn;
  if (criterion.metadata) input.metadata = { ...criterion.metadata };
  return input;
}

/**
 * The importance of an existing criterion: from its metadata or tag when it was generated,
 * else the level whose points are nearest (negative points: Pitfall).
 */
export function importanceOf(criterion: Pick<Criterion, 'points' | 'tags' | 'metadata'>, points: ImportancePoints): Importance {
  const declared = criterion.metadata?.importance;
  if (typeof declared === 'string') {
    const level = importanceLevels.find((name) => name === declared);
    if (level) return level;
  }
  for (const level of importanceLevels) if (criterion.tags.includes(importanceTag(level))) return level;
  if (criterion.points < 0) return 'Pitfall';
  let best: Importance = 'Important';
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const level of ['Essential', 'Important', 'Optional'] as const) {
    const distance = Math.abs(points[level] - criterion.points);
    if (distance < bestDistance) {
      best = level;
      bestDistance = distance;
    }
  }
  return best;
}

export function shorten(text: string, length = 80): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}
