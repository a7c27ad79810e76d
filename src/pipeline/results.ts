/**
 * The results file: one JSON line per input record, in input order. Everything needed to
 * re-score, report or audit a verdict is on the line: criteria with verdicts and reasons,
 * the graded text, and provenance (rubric hash, judge, template, sampling, version).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { GradedItem, GradedRecord } from '../engine/engine.js';
import type { Usage } from '../engine/usage.js';
import { RubricateError, type SerializedError } from '../errors.js';
import { memoizedRubricHash } from '../rubric/hashing.js';
import { formatPath } from '../rubric/normalize.js';
import type { Message } from '../rubric/schema.js';
import { resultImage, type ResultImage } from '../images/images.js';
import { renderedStepOffsets } from '../trajectory/render.js';
import type { ScoredCriterion, ScoredItem, Scoring } from '../scoring/types.js';
import { parseLineJson, readLines } from '../util/jsonl.js';
import { rubricateVersion } from '../version.js';
import type { InvalidRecord } from '../rubric/records.js';

export interface ResultCriterion {
  id: string;
  text: string;
  points: number;
  tags: string[];
  kind: 'principle' | 'hard_rule';
  source: 'judge' | 'check';
  status: 'ok' | 'error' | 'skipped';
  met: boolean | null;
  value?: number | null;
  label?: string;
  probability?: number;
  explanation?: string;
  error?: SerializedError;
  skip_reason?: string;
  /** Hierarchical criteria: each sub-check's verdict. */
  subchecks?: Array<{ text: string; met: boolean; explanation?: string }>;
  /** Judged on excerpts of a long response: how many passages from how many parts. */
  evidence?: { chunks: number; quotes: number };
  /** Trajectory items: step numbers the verdict cites. */
  steps?: number[];
  /** Juries: every judge's (or sample's) verdict on this criterion. */
  votes?: Array<{ judge: string; sample?: number; met: boolean | null; value?: number | null; label?: string; error?: string }>;
}

export interface JudgeInfo {
  id: string;
  model: string;
  base_url?: string;
  /** Request-shaping settings of an HTTP judge (capability profile, extra body, headers with secrets redacted). */
  settings?: Record<string, unknown>;
  template_version: string;
  mode: string;
  temperature?: number;
  max_tokens?: number;
  seed?: number;
  verdict?: string;
  /** Juries: the members (judge, sample) and how their votes combine. */
  jury?: { members: Array<{ judge: string; sample?: number }>; aggregate: string };
}

export interface ResultRecord {
  id: string;
  status: 'ok' | 'error' | 'invalid';
  score: number | null;
  gated?: boolean;
  criteria: ResultCriterion[];
  tags?: string[];
  prompt?: Message[];
  response?: string;
  reference?: string;
  /** Trajectory items: where each step's "[step N]" header starts in `response` (UTF-16 offsets). */
  step_offsets?: number[];
  /** Images of the prompt, reference and response (their placeholders stand in the texts), with their bytes up to a limit. */
  images?: ResultImage[];
  metadata?: Record<string, unknown>;
  rubric_id?: string;
  rubric_hash?: string;
  judge?: JudgeInfo;
  scoring?: string;
  usage?: Usage;
  error?: SerializedError;
  line?: number;
  /** Length of the response in characters (code points), kept even when text is omitted. */
  response_chars?: number;
  rubricate_version: string;
}

export interface ResultContext {
  judge?: JudgeInfo;
  scoring: Scoring;
  /** Leave prompt and response text out of results (smaller files). */
  omitText?: boolean;
}

export function toResultCriterion(result: GradedItem['criteria'][number]): ResultCriterion {
  const { criterion, verdict } = result;
  const line: ResultCriterion = {
    id: criterion.id,
    text: criterion.text,
    points: criterion.points,
    tags: criterion.tags,
    kind: criterion.kind,
    source: result.source,
    status: result.status,
    met: verdict ? verdict.met : null,
  };
  if (verdict) {
    if (verdict.value !== (verdict.met ? 1 : 0) || criterion.scale) line.value = verdict.value;
    if (verdict.label !== undefined) line.label = verdict.label;
    if (verdict.probability !== undefined) line.probability = verdict.probability;
    if (verdict.explanation !== undefined) line.explanation = verdict.explanation;
    if (verdict.subchecks) line.subchecks = verdict.subchecks;
    if (verdict.evidence) line.evidence = verdict.evidence;
    if (verdict.steps && verdict.steps.length > 0) line.steps = verdict.steps;
  }
  if (result.error) line.error = result.error;
  if (result.skipReason) line.skip_reason = result.skipReason;
  return line;
}

export function toScoredItem(record: Pick<ResultRecord, 'id' | 'status' | 'gated' | 'tags' | 'criteria' | 'metadata' | 'response' | 'response_chars'>): ScoredItem {
  const item: ScoredItem = {
    id: record.id,
    status: record.status,
    criteria: record.criteria.map(
      (criterion): ScoredCriterion => ({
        id: criterion.id,
        points: criterion.points,
        tags: criterion.tags,
        kind: criterion.kind,
        source: criterion.source,
        status: criterion.status,
        met: criterion.met,
        value: criterion.value,
        label: criterion.label,
        ...(typeof criterion.text === 'string' ? { text: criterion.text } : {}),
      }),
    ),
  };
  if (record.gated) item.gated = true;
  if (record.tags) item.tags = record.tags;
  const chars = record.response_chars ?? (typeof record.response === 'string' ? characterCount(record.response) : undefined);
  if (chars !== undefined) item.responseCharacters = chars;
  if (typeof record.response === 'string') item.responseDigest = createHash('sha256').update(record.response).digest('hex');
  if (record.metadata) item.metadata = record.metadata;
  return item;
}

export function toResultRecord(record: GradedRecord, context: ResultContext): ResultRecord {
  if (record.kind === 'invalid') {
    return {
      id: record.id ?? '',
      status: 'invalid',
      score: null,
      criteria: [],
      error: record.error.toJSON(),
      line: record.line,
      rubricate_version: rubricateVersion,
    };
  }
  const { graded } = record;
  const { item } = graded;
  const criteria = graded.criteria.map(toResultCriterion);
  const result: ResultRecord = {
    id: item.id,
    status: graded.status,
    score: null,
    criteria,
    rubricate_version: rubricateVersion,
  };
  if (graded.gated) result.gated = true;
  if (item.tags) result.tags = item.tags;
  result.score = context.scoring.itemScore(toScoredItem(result));
  result.response_chars = characterCount(item.response);
  if (!context.omitText) {
    result.prompt = item.prompt;
    result.response = item.response;
    if (item.reference !== undefined) result.reference = item.reference;
    if (item.images && item.images.length > 0) result.images = item.images.map(resultImage);
    if (item.trajectory) {
      const rendered = renderedStepOffsets(item.trajectory);
      if (rendered.text === item.response) result.step_offsets = rendered.offsets;
    }
  }
  if (item.metadata) result.metadata = item.metadata;
  result.rubric_id = item.rubric.id;
  result.rubric_hash = memoizedRubricHash(item.rubric);
  if (context.judge) result.judge = context.judge;
  result.scoring = context.scoring.name;
  result.usage = graded.usage;
  result.line = record.line;
  if (graded.status === 'error') {
    const first = criteria.find((criterion) => criterion.status === 'error');
    const failed = criteria.filter((criterion) => criterion.status === 'error').length;
    result.error = {
      code: first?.error?.code ?? 'INTERNAL',
      message: `${failed} of ${criteria.length} criteria could not be graded; first: ${first?.error?.message ?? 'unknown'}`,
    };
  }
  return result;
}

const finite = z.number().refine(Number.isFinite, { message: 'must be a finite number' });
const unitInterval = finite.refine((value) => value >= 0 && value <= 1, { message: 'must be between 0 and 1' });

/**
 * The rules every results line obeys, as `toResultRecord` writes it; `score`, `report` and
 * `meta` read results through this schema, so a hand-edited or foreign line cannot be
 * counted as something it is not (an `ok` criterion without a verdict, a value off the scale).
 */
export const resultCriterionSchema = z
  .looseObject({
    id: z.string(),
    points: finite,
    tags: z.array(z.string()).default([]),
    status: z.enum(['ok', 'error', 'skipped']),
    met: z.boolean().nullable(),
    value: unitInterval.nullable().optional(),
    probability: unitInterval.optional(),
  })
  .refine((criterion) => criterion.status !== 'ok' || criterion.met !== null, { message: 'a criterion with status "ok" needs a verdict: met must be true or false', path: ['met'] })
  .refine((criterion) => criterion.status !== 'ok' || criterion.value !== null, { message: 'a criterion with status "ok" cannot have value null', path: ['value'] });

export const resultRecordSchema = z
  .looseObject({
    id: z.string(),
    status: z.enum(['ok', 'error', 'invalid']),
    criteria: z.array(resultCriterionSchema).default([]),
    tags: z.array(z.string()).optional(),
    gated: z.boolean().optional(),
  })
  .refine(
    (record) => {
      let positive = 0;
      let negative = 0;
      for (const criterion of record.criteria) {
        if (criterion.points > 0) positive += criterion.points;
        else negative += criterion.points;
      }
      return Number.isFinite(positive) && Number.isFinite(negative);
    },
    { message: 'the criteria points add up to more than the largest representable number', path: ['criteria'] },
  );

export type ResultReadRecord = { kind: 'result'; record: ResultRecord; line: number } | InvalidRecord;

/** Streams a results file back, each line validated; a bad line is reported, not fatal. */
export async function* readResults(file: string): AsyncGenerator<ResultReadRecord> {
  for await (const { line, text, error: lineError } of readLines(file)) {
    const parsed = parseLineJson(text, lineError);
    if (!parsed.ok) {
      yield { kind: 'invalid', line, error: new RubricateError('INPUT_INVALID', parsed.error, { file, line }) };
      continue;
    }
    const checked = resultRecordSchema.safeParse(parsed.value);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      yield {
        kind: 'invalid',
        line,
        error: new RubricateError('INPUT_INVALID', `not a results line: ${issue.message}`, { file, line, field: formatPath(issue.path) }),
      };
      continue;
    }
    yield { kind: 'result', record: checked.data as unknown as ResultRecord, line };
  }
}

/** Characters as Python counts them (code points), so length-based scores match the reference. */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}
