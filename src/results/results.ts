/**
 * The results file: one JSON line per input record, in input order. Everything needed to
 * re-score, report or audit a verdict is on the line: criteria with verdicts and reasons,
 * the graded text, and provenance (rubric hash, judge, template, sampling, version).
 */
import { sha256Hex } from '../util/hash.js';
import { z } from 'zod';
import type { GradedItem, GradedRecord, JudgeCallTrace } from '../engine/engine.js';
import type { Usage } from '../engine/usage.js';
import { RubricateError, type SerializedError } from '../errors.js';
import { zodIssueError } from '../util/zod-issue.js';
import { memoizedRubricHash } from '../rubric/hashing.js';
import type { Message, SampledResponse } from '../rubric/schema.js';
import { resultImage, type ResultImage } from '../images/images.js';
import { renderedStepOffsets } from '../trajectory/render.js';
import type { ScoredCriterion, ScoredItem, Scoring } from '../scoring/types.js';
import { parseLineJson, readLines } from '../util/jsonl.js';
import { rubricateVersion } from '../version.js';
import { calibratedScore, type Calibration } from '../spec/calibration.js';
import type { InvalidRecord } from '../rubric/records.js';
import type { Judge, JudgeToolCall } from '../judges/types.js';
import type { CriterionResult, SamplingOptions, TurnResult } from '../grading/types.js';
import { stepReward } from '../scoring/step-aggregate.js';
import { redactDeep, redactText, redactUrl } from '../util/redact.js';
import { recordedSampling } from '../grading/sampling.js';

const finite = z.number().refine(Number.isFinite, { message: 'must be a finite number' });
const unitInterval = finite.refine((value) => value >= 0 && value <= 1, { message: 'must be between 0 and 1' });

/**
 * A field validated by `schema` but kept as written. Parsing rebuilds an object in its
 * schema's key order; nested objects built elsewhere (judge provenance, usage, errors,
 * votes) keep theirs, so a line read and written back is byte-identical.
 */
function kept<T>(schema: z.ZodType): z.ZodType<T> {
  return z.custom<T>().superRefine((value, context) => {
    const checked = schema.safeParse(value);
    if (!checked.success) for (const issue of checked.error.issues) context.addIssue({ code: 'custom', message: issue.message, path: issue.path, input: value });
  });
}

const serializedErrorSchema = z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() });
const objectSchema = z.record(z.string(), z.unknown());

const judgeInfoSchema = z.object({
  id: z.string(),
  model: z.string(),
  base_url: z.string().optional(),
  /** Request-shaping settings of an HTTP judge (capability profile, extra body, headers with secrets redacted). */
  settings: objectSchema.optional(),
  template_version: z.string(),
  mode: z.string(),
  temperature: z.number().optional(),
  max_tokens: z.number().optional(),
  seed: z.number().optional(),
  verdict: z.string().optional(),
  /** `--abstain`: how a criterion the judge could not assess counts (skip, not_met, half, fail). */
  abstain: z.string().optional(),
  /** `--alignment`: the hash of the alignment applied (examples, rewordings, calibrator). */
  alignment: z.string().optional(),
  /** Juries: the members (judge, sample) and how their votes combine. */
  jury: z.object({ members: z.array(z.object({ judge: z.string(), sample: z.number().optional() })), aggregate: z.string() }).optional(),
  /** `--judge-template`: the sha256 of the template's text (its first 12 characters are in `template_version`). */
  template_sha256: z.string().optional(),
  /** Cascades: the judges after the first, in order, and the rule that escalates to them. */
  cascade: z.object({ judges: z.array(z.string()), band: z.tuple([z.number(), z.number()]).optional(), escalate_on: z.array(z.string()) }).optional(),
});

const juryVoteSchema = z.object({
  judge: z.string(),
  sample: z.number().optional(),
  met: z.boolean().nullable(),
  value: z.number().nullable().optional(),
  label: z.string().optional(),
  error: z.string().optional(),
});

/** `grade --shard I/N`: which part of which input a line belongs to, for `merge` to check the parts make one whole. */
const shardSchema = z
  .object({
    index: z.number().int().nonnegative(),
    count: z.number().int().positive(),
    /** Records of the whole input (every shard's lines together). */
    records: z.number().int().nonnegative(),
    /** The input files' identity (their bytes and the format that read them). */
    input_sha256: z.string(),
  })
  .refine((shard) => shard.index < shard.count, { message: 'index must be below count', path: ['index'] });
/** One judge call as `--keep-requests` keeps it: the request as sent (messages, sampling, reply schema), the raw reply and its latency. */
const judgeCallSchema = z.object({
  /** Ids of the criteria the call decides. */
  criteria: z.array(z.string()),
  /** In a jury: the member that called. */
  judge: z.string().optional(),
  sample: z.number().optional(),
  messages: z.array(z.object({ role: z.string(), content: z.string() })),
  temperature: z.number().optional(),
  max_tokens: z.number().optional(),
  seed: z.number().optional(),
  /** Alternatives asked per token (probability verdicts). */
  top_logprobs: z.number().optional(),
  /** The structured-output schema asked for. */
  output_schema: z.object({ name: z.string(), schema: objectSchema }).optional(),
  /** The reply's text exactly as the judge returned it. */
  reply: z.string().optional(),
  reasoning: z.string().optional(),
  finish_reason: z.string().optional(),
  /** Milliseconds the answering call took (a reply from the cache keeps the time of the call that made it). */
  latency_ms: z.number().optional(),
  /** Calls made to the judge for it: 0 when the reply came from the cache or an identical call. */
  attempts: z.number(),
  error: serializedErrorSchema.optional(),
});

/** Listwise and tournament judging: the group a line's response was judged with. */
const groupSchema = z.object({
  id: z.string(),
  members: z.number().int().positive(),
  index: z.number().int().nonnegative(),
  position_consistency: unitInterval.nullable().optional(),
  bradley_terry: unitInterval.nullable().optional(),
});

const calibrationLineSchema = z.object({ score: finite.nullable(), target: z.string(), hash: z.string(), missing: z.array(z.string()).optional() });
export type CalibrationLine = z.infer<typeof calibrationLineSchema>;
const subcheckSchema = z.object({ text: z.string(), met: z.boolean(), explanation: z.string().optional() });
/** An agentic judge's tool call before a verdict (`src/judges/agentic/`): what it asked, what came back, or why it failed. */
const toolCallSchema = z.object({
  name: z.string(),
  arguments: objectSchema,
  outcome: z.enum(['ok', 'error']),
  summary: z.string(),
  bytes: z.number().int().min(0),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});
/** One turn's verdict of a per-turn criterion. */
const turnVerdictSchema = z.object({
  turn: z.number().int().positive(),
  status: z.enum(['ok', 'error', 'skipped']),
  met: z.boolean().nullable(),
  value: unitInterval.optional(),
  label: z.string().optional(),
  probability: unitInterval.optional(),
  expected_score: finite.optional(),
  explanation: z.string().optional(),
  error: kept<SerializedError>(serializedErrorSchema).optional(),
});
const turnsSchema = z.object({ aggregate: z.enum(['mean', 'min', 'all']), verdicts: z.array(turnVerdictSchema).min(1) });
/** One step's verdict of a step-scoped criterion (process rewards): a turn's fields, keyed by step. */
const stepVerdictSchema = turnVerdictSchema.omit({ turn: true }).extend({ step: z.number().int().positive() });
const processSchema = z.object({
  aggregate: z.enum(['min', 'mean', 'last', 'discounted']),
  gamma: z.number().gt(0).max(1).optional(),
  verdicts: z.array(stepVerdictSchema).min(1),
});
type ProcessLine = z.output<typeof processSchema>;
const cascadeDecisionSchema = z.object({ decided_by: z.string(), escalations: z.array(z.object({ judge: z.string(), reason: z.string(), probability: unitInterval.optional() })) });
type TurnsLine = z.output<typeof turnsSchema>;
type CascadeLine = z.output<typeof cascadeDecisionSchema>;
const evidenceSchema = z.object({ chunks: z.number(), quotes: z.number() });
type Subcheck = z.output<typeof subcheckSchema>;
/** A judge call a results line keeps (`--keep-requests`). */
export type JudgeCallLine = z.output<typeof judgeCallSchema>;
type EvidenceCount = z.output<typeof evidenceSchema>;

/**
 * One criterion of a results line, keys in the order `toGradedCriterion` writes them (a
 * parsed line comes back in this order). The rules keep a hand-edited or foreign line from
 * being counted as something it is not: an `ok` criterion without a verdict, a value off the scale.
 */
const gradedCriterionSchema = z
  .looseObject({
    id: z.string(),
    text: z.string().optional(),
    points: finite,
    tags: z.array(z.string()).default([]),
    kind: z.enum(['principle', 'hard_rule']).default('principle'),
    source: z.enum(['judge', 'check']).default('judge'),
    status: z.enum(['ok', 'error', 'skipped']),
    met: z.boolean().nullable(),
    /**
     * The judge answered that it could not assess the criterion (`--abstain`): `met` and `value`
     * are then what the run's policy counts (`skip` and `fail`: status `skipped`, met null).
     */
    cannot_assess: z.literal(true).optional(),
    value: unitInterval.nullable().optional(),
    label: z.string().optional(),
    probability: unitInterval.optional(),
    explanation: z.string().optional(),
    /** Hierarchical criteria: each sub-check's verdict. */
    subchecks: kept<Subcheck[]>(z.array(subcheckSchema)).optional(),
    /** Judged on excerpts of a long response: how many passages from how many parts. */
    evidence: kept<EvidenceCount>(evidenceSchema).optional(),
    /** Trajectory items: step numbers the verdict cites. */
    steps: z.array(z.number()).optional(),
    /** Code checks: tests the response's code passed, of how many, and how the sandboxed run ended. */
    tests: z.object({ passed: z.number().int().min(0), total: z.number().int().min(0), ending: z.enum(['finished', 'time_limit', 'output_limit']) }).optional(),
    /** The model the provider's reply says answered, when it is not `judge.model` (a dated snapshot behind an alias). */
    judge_model: z.string().optional(),
    /** Agentic judges: every tool call made before this verdict, in order. */
    tool_calls: kept<JudgeToolCall[]>(z.array(toolCallSchema)).optional(),
    error: kept<SerializedError>(serializedErrorSchema).optional(),
    skip_reason: z.string().optional(),
    /** Conditional criteria: the conditions it was graded under (skip_reason `not_applicable` when one failed). */
    when: z.array(z.object({ criterion: z.string(), verdict: z.union([z.boolean(), z.array(z.string())]) })).optional(),
    /** Juries: every judge's (or sample's) verdict on this criterion. */
    votes: kept<JuryVote[]>(z.array(juryVoteSchema)).optional(),
    /** `--verdict expected-score`: the probability-weighted mean of the scale's numeric labels (G-Eval). */
    expected_score: finite.optional(),
    /** Per-turn criteria: each turn's verdict, and how they fold into `met` and `value` (the rubric's `turn_aggregate`). */
    turns: kept<TurnsLine>(turnsSchema).optional(),
    /** Step-scoped criteria (process rewards): each step's verdict, and how they fold into `met` and `value` (the rubric's `step_aggregate`). */
    process: kept<ProcessLine>(processSchema).optional(),
    /** Cascades: the judge that decided this criterion, and each escalation before it with its reason. */
    cascade: kept<CascadeLine>(cascadeDecisionSchema).optional(),
    /** A check that could not decide, why; the judge decided it instead (`fallback: "judge"`). */
    check_undecided: z.string().optional(),
    /** `grade --repeats N`: this criterion's verdict in each repeat, the run's own first (null: none in that repeat). */
    repeats: z.array(z.boolean().nullable()).optional(),
  })
  .refine((criterion) => criterion.status !== 'ok' || criterion.met !== null, { message: 'a criterion with status "ok" needs a verdict: met must be true or false', path: ['met'] })
  .refine((criterion) => criterion.status !== 'ok' || criterion.value !== null, { message: 'a criterion with status "ok" cannot have value null', path: ['value'] });

const selfPreferenceSchema = z.object({ model_under_test: z.string(), judge: z.string(), relation: z.enum(['same-model', 'same-family', 'unrelated']), policy: z.enum(['warn', 'refuse']) });
type SelfPreferenceLine = z.output<typeof selfPreferenceSchema>;

/** Fields of a results line besides id, status, score and criteria. */
const lineFields = {
  rubricate_version: z.string().optional(),
  gated: z.boolean().optional(),
  tags: z.array(z.string()).optional(),
  /** Listwise and tournament judging: the group judged together (the group's usage is on its first line). */
  group: kept<GroupStamp>(groupSchema).optional(),
  /** Process rewards: each trajectory step's reward from the step-scoped criteria (null: a step not graded). */
  step_rewards: z.array(finite.nullable()).optional(),
  /** Length of the response in characters (code points), kept even when text is omitted. */
  response_chars: z.number().int().nonnegative().optional(),
  prompt: kept<Message[]>(z.array(objectSchema)).optional(),
  response: z.string().optional(),
  /** `rubricate eval`: where the response came from (model, endpoint, settings, usage, time, request hash), or why there is none. */
  sampled: kept<SampledResponse>(objectSchema).optional(),
  reference: z.string().optional(),
  /** Trajectory items: where each step's "[step N]" header starts in `response` (UTF-16 offsets). */
  step_offsets: z.array(z.number().int().nonnegative()).optional(),
  /** Images of the prompt, reference and response (their placeholders stand in the texts), with their bytes up to a limit. */
  images: kept<ResultImage[]>(z.array(z.object({ index: z.number(), place: z.string(), media_type: z.string(), bytes: z.number(), sha256: z.string(), source: z.string(), data: z.string().optional() }))).optional(),
  metadata: kept<Record<string, unknown>>(objectSchema).optional(),
  rubric_id: z.string().optional(),
  rubric_hash: z.string().optional(),
  judge: kept<JudgeInfo>(judgeInfoSchema).optional(),
  scoring: z.string().optional(),
  usage: kept<Usage>(objectSchema).optional(),
  /** The self-preference guard: the model under test, the judge, and how they are related (same model or family). */
  self_preference: kept<SelfPreferenceLine>(selfPreferenceSchema).optional(),
  /** With `--keep-requests`: every judge call of the item, as sent and as answered (redacted). */
  judge_calls: kept<JudgeCallLine[]>(z.array(judgeCallSchema)).optional(),
  /** The input line this result came from. */
  line: z.number().int().optional(),
  error: kept<SerializedError>(serializedErrorSchema).optional(),
  /** `grade --repeats N`: the item's score in each repeat, the run's own (`score`) first (null: not scored in that repeat). */
  repeat_scores: z.array(finite.nullable()).optional(),
  /** Only in the output of `grade --shard I/N` (and not in what `merge` writes). */
  shard: kept<ShardStamp>(shardSchema).optional(),
  /** `grade --calibration`: the calibrated overall score (null when a criterion it reads has no verdict, named in `missing`), what it predicts and the calibration's hash. */
  calibration: kept<CalibrationLine>(calibrationLineSchema).optional(),
  /** `rubricate improve`: every round's score and the round this line's response comes from. */
  improvement: objectSchema.optional(),
  /** `--config FILE`: the file and every setting the run was given, by flag name (secrets left out). */
  config: kept<{ file: string; settings: Record<string, unknown> }>(z.object({ file: z.string(), settings: objectSchema })).optional(),
};

/**
 * A results line with this status, keys in the order `toResultRecord` writes them: id, status,
 * score, criteria, then `leading` (fields this kind of line writes first), then the rest of
 * `lineFields` in their order. Parsing rebuilds the object in this order, so the order is the
 * byte layout a line read and written back keeps.
 */
function lineSchema<Status extends z.ZodType>(status: Status, leading: Partial<typeof lineFields> = {}) {
  return z.looseObject({
    id: z.string(),
    status,
    score: finite.nullable().default(null),
    criteria: z.array(gradedCriterionSchema).default([]),
    ...leading,
    ...lineFields,
  });
}

/** A graded item's line (`ok` or `error`). */
const gradedLineSchema = lineSchema(z.enum(['ok', 'error']));
/** The line of an input record that could not be read as an item: the same fields, its error and line first. */
const invalidLineSchema = lineSchema(z.literal('invalid'), { error: lineFields.error, line: lineFields.line });

/**
 * The results line: what `toResultRecord` writes and what `score`, `report`, `meta` and
 * `merge` read (`readResults`). Its types below are derived from it.
 *
 * @example
 * ```ts
 * import { resultRecordSchema } from 'rubricate';
 * import { readFileSync } from 'node:fs';
 * const first = resultRecordSchema.parse(JSON.parse(readFileSync('results.jsonl', 'utf8').split('\n')[0]));
 * ```
 */
export const resultRecordSchema = z.discriminatedUnion('status', [gradedLineSchema, invalidLineSchema]).refine(
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

/** One results line. */
export type ResultRecord = z.output<typeof resultRecordSchema>;
/** The group a line of listwise or tournament judging belongs to. */
export type GroupStamp = z.output<typeof groupSchema>;
/** The shard a line of `grade --shard I/N` belongs to. */
export type ShardStamp = z.output<typeof shardSchema>;
/** One criterion of a results line: the criterion, its verdict (or error, or skip reason), its votes. */
export type GradedCriterion = z.output<typeof gradedCriterionSchema>;
/** The judge provenance a results line carries. */
export type JudgeInfo = z.output<typeof judgeInfoSchema>;
/** One jury member's vote on a criterion. */
export type JuryVote = z.output<typeof juryVoteSchema>;

export interface ResultContext {
  judge?: JudgeInfo;
  scoring: Scoring;
  /** `grade --calibration`: the overall score people would give, from the criteria's verdicts. */
  calibration?: Calibration;
  /** Leave prompt and response text out of results (smaller files). */
  omitText?: boolean;
}

/** A criterion's result as the grader hands it over: a jury's carries every member's vote. */
type CriterionOutcome = GradedItem['criteria'][number] & { votes?: JuryVote[] };

function toGradedCriterion(result: CriterionOutcome): GradedCriterion {
  const { criterion, verdict } = result;
  const line: GradedCriterion = {
    id: criterion.id,
    text: criterion.text,
    points: criterion.points,
    tags: criterion.tags,
    kind: criterion.kind,
    source: result.source,
    status: result.status,
    // A skipped criterion has no verdict to count, even when the judge's answer is kept (an abstention).
    met: verdict && result.status !== 'skipped' ? verdict.met : null,
  };
  if (verdict?.cannotAssess) line.cannot_assess = true;
  if (verdict && result.status === 'skipped') {
    if (verdict.explanation !== undefined) line.explanation = verdict.explanation;
  } else if (verdict) {
    if (verdict.value !== (verdict.met ? 1 : 0) || criterion.scale) line.value = verdict.value;
    if (verdict.label !== undefined) line.label = verdict.label;
    if (verdict.probability !== undefined) line.probability = verdict.probability;
    if (verdict.explanation !== undefined) line.explanation = verdict.explanation;
    if (verdict.subchecks) line.subchecks = verdict.subchecks;
    if (verdict.evidence) line.evidence = verdict.evidence;
    if (verdict.steps && verdict.steps.length > 0) line.steps = verdict.steps;
    if (verdict.tests) line.tests = verdict.tests;
    if (verdict.judgeModel !== undefined) line.judge_model = verdict.judgeModel;
    if (verdict.toolCalls && verdict.toolCalls.length > 0) line.tool_calls = verdict.toolCalls;
  }
  if (result.error) line.error = result.error;
  if (result.skipReason) line.skip_reason = result.skipReason;
  if (criterion.when) line.when = criterion.when;
  if (result.votes && result.votes.length > 0) line.votes = result.votes;
  if (verdict?.expectedScore !== undefined) line.expected_score = verdict.expectedScore;
  if (result.turns) line.turns = { aggregate: result.turns.aggregate, verdicts: result.turns.results.map(turnLine) };
  if (result.process) line.process = processLine(result.process);
  if (result.cascade) line.cascade = { decided_by: result.cascade.decidedBy, escalations: result.cascade.escalations };
  if (result.checkUndecided !== undefined) line.check_undecided = result.checkUndecided;
  return line;
}

function processLine(process: NonNullable<CriterionResult['process']>): ProcessLine {
  const { aggregate } = process;
  const verdicts = process.results.map(({ step, ...rest }) => {
    const { turn: _turn, ...line } = turnLine({ turn: step, ...rest });
    return { step, ...line };
  });
  return { aggregate: aggregate.rule, ...(aggregate.rule === 'discounted' ? { gamma: aggregate.gamma } : {}), verdicts };
}

/**
 * Process rewards: each step's reward (`step_rewards`), the step criteria's weighted mean there
 * (src/scoring/step-aggregate.ts); null at a step where one of them is in error or has no verdict.
 */
function stepRewardsOf(criteria: readonly CriterionResult[]): Array<number | null> | undefined {
  const processed = criteria.filter((result) => result.process);
  if (processed.length === 0) return undefined;
  return processed[0].process!.results.map((_, index) => {
    const atStep = processed.map((result) => ({ points: result.criterion.points, result: result.process!.results[index] }));
    if (atStep.some(({ result }) => result?.status !== 'ok' || !result.verdict)) return null;
    return stepReward(atStep.map(({ points, result }) => ({ points, value: result.verdict!.value })));
  });
}

function turnLine(turn: TurnResult): TurnsLine['verdicts'][number] {
  const { verdict } = turn;
  return {
    turn: turn.turn,
    status: turn.status,
    met: verdict ? verdict.met : null,
    ...(verdict && verdict.value !== (verdict.met ? 1 : 0) ? { value: verdict.value } : {}),
    ...(verdict?.label !== undefined ? { label: verdict.label } : {}),
    ...(verdict?.probability !== undefined ? { probability: verdict.probability } : {}),
    ...(verdict?.expectedScore !== undefined ? { expected_score: verdict.expectedScore } : {}),
    ...(verdict?.explanation !== undefined ? { explanation: verdict.explanation } : {}),
    ...(turn.error ? { error: turn.error } : {}),
  };
}

/**
 * A results line as a scoring reads it.
 *
 * @example
 * ```ts
 * import { aggregate, getScoring, readResults, toScoredItem } from 'rubricate';
 * const scored = [];
 * for await (const line of readResults('results.jsonl')) if (line.kind === 'result') scored.push(toScoredItem(line.record));
 * const metrics = aggregate(getScoring('healthbench'), scored);
 * ```
 */
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
        ...(criterion.expected_score !== undefined ? { expectedScore: criterion.expected_score } : {}),
        ...(criterion.cannot_assess ? { cannotAssess: true } : {}),
      }),
    ),
  };
  if (record.gated) item.gated = true;
  if (record.tags) item.tags = record.tags;
  const chars = record.response_chars ?? (typeof record.response === 'string' ? characterCount(record.response) : undefined);
  if (chars !== undefined) item.responseCharacters = chars;
  if (typeof record.response === 'string') item.responseDigest = sha256Hex(record.response);
  if (record.metadata) item.metadata = record.metadata;
  return item;
}

/**
 * The judge provenance every result line of a run carries, for `grade` and `compare` alike: who
 * judged (one judge's endpoint and request settings; a jury's members), with which template,
 * mode, sampling and verdict kind. None without a judge.
 */
export function judgeInfoFor(
  judges: readonly Judge[],
  run: { templateVersion: string; mode: string; sampling: SamplingOptions; verdict?: string; abstain?: string; alignment?: string; jury?: JudgeInfo['jury']; templateSha256?: string; cascade?: JudgeInfo['cascade'] },
): JudgeInfo | undefined {
  const [primary] = judges;
  if (!primary) return undefined;
  const { provenance } = primary;
  const one = judges.length === 1;
  return {
    id: one ? provenance.id : judges.map((judge) => judge.provenance.id).join('+'),
    model: one ? provenance.model : judges.map((judge) => judge.provenance.model).join('+'),
    ...(one && provenance.baseUrl ? { base_url: redactUrl(provenance.baseUrl) } : {}),
    ...(one && provenance.settings ? { settings: provenance.settings } : {}),
    template_version: run.templateVersion,
    mode: run.mode,
    ...recordedSampling(run.sampling),
    ...(run.verdict !== undefined ? { verdict: run.verdict } : {}),
    ...(run.abstain !== undefined ? { abstain: run.abstain } : {}),
    ...(run.alignment !== undefined ? { alignment: run.alignment } : {}),
    ...(run.jury ? { jury: run.jury } : {}),
    ...(run.templateSha256 !== undefined ? { template_sha256: run.templateSha256 } : {}),
    ...(run.cascade ? { cascade: run.cascade } : {}),
  };
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
  const criteria = graded.criteria.map(toGradedCriterion);
  const result: ResultRecord = {
    id: item.id,
    status: graded.status,
    score: null,
    criteria,
    rubricate_version: rubricateVersion,
  };
  if (graded.gated) result.gated = true;
  if (item.tags) result.tags = item.tags;
  if (graded.group) result.group = groupStamp(graded.group);
  const stepRewards = stepRewardsOf(graded.criteria);
  if (stepRewards) result.step_rewards = stepRewards;
  result.score = context.scoring.itemScore(toScoredItem(result));
  if (context.calibration) {
    const { score, missing } = calibratedScore(context.calibration, criteria);
    result.calibration = { score, target: context.calibration.target, hash: context.calibration.hash, ...(missing.length > 0 ? { missing } : {}) };
  }
  result.response_chars = characterCount(item.response);
  if (!context.omitText) {
    result.prompt = item.prompt;
    result.response = item.response;
  }
  if (item.sampled) result.sampled = item.sampled;
  if (!context.omitText) {
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
  if (graded.selfPreference) {
    const { modelUnderTest, judge, relation, policy } = graded.selfPreference;
    result.self_preference = { model_under_test: modelUnderTest, judge, relation, policy };
  }
  if (graded.calls) result.judge_calls = graded.calls.map(toJudgeCallLine);
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

/** A kept call as its results line writes it (keys in the schema's order), texts redacted like every other output. */
function toJudgeCallLine(call: JudgeCallTrace): JudgeCallLine {
  const { request, reply } = call;
  const line: JudgeCallLine = { criteria: call.criteria } as JudgeCallLine;
  if (call.member) {
    line.judge = call.member.judge;
    if (call.member.sample !== undefined) line.sample = call.member.sample;
  }
  line.messages = request.messages.map((message) => ({ role: message.role, content: redactText(message.content) }));
  if (request.temperature !== undefined) line.temperature = request.temperature;
  if (request.maxTokens !== undefined) line.max_tokens = request.maxTokens;
  if (request.seed !== undefined) line.seed = request.seed;
  if (request.logprobs) line.top_logprobs = request.logprobs.top;
  if (request.output) line.output_schema = { name: request.output.name, schema: request.output.schema };
  if (reply) {
    line.reply = redactText(reply.text);
    if (reply.reasoning !== undefined) line.reasoning = redactText(reply.reasoning);
    if (reply.finishReason !== undefined) line.finish_reason = reply.finishReason;
    if (reply.latencyMs !== undefined) line.latency_ms = reply.latencyMs;
  }
  line.attempts = call.attempts;
  if (call.error) line.error = redactDeep(call.error.toJSON());
  return line;
}

/** A group's part of a results line: which group, its members, this response's place, the group's statistics. */
function groupStamp(group: NonNullable<GradedItem['group']>): GroupStamp {
  return {
    id: group.id,
    members: group.members,
    index: group.index,
    ...(group.positionConsistency !== undefined ? { position_consistency: group.positionConsistency } : {}),
    ...(group.bradleyTerry !== undefined ? { bradley_terry: group.bradleyTerry } : {}),
  };
}

export type ResultReadRecord = { kind: 'result'; record: ResultRecord; line: number } | InvalidRecord;

/**
 * Streams a results file back, each line validated; a bad line is reported, not fatal.
 *
 * @example
 * ```ts
 * import { readResults } from 'rubricate';
 * for await (const line of readResults('results.jsonl')) {
 *   if (line.kind === 'result') console.log(line.record.id, line.record.score);
 * }
 * ```
 */
export async function* readResults(file: string): AsyncGenerator<ResultReadRecord> {
  for await (const { line, text, error: lineError } of readLines(file)) {
    const parsed = parseLineJson(text, lineError);
    if (!parsed.ok) {
      yield { kind: 'invalid', line, error: new RubricateError('INPUT_INVALID', parsed.error, { file, line }) };
      continue;
    }
    const checked = resultRecordSchema.safeParse(parsed.value);
    if (!checked.success) {
      yield {
        kind: 'invalid',
        line,
        error: zodIssueError(checked.error, { prefix: 'not a results line: ', indexed: true, fieldWhenEmpty: '', details: { file, line } }),
      };
      continue;
    }
    yield { kind: 'result', record: checked.data, line };
  }
}

/** Characters as Python counts them (code points), so length-based scores match the reference. */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}
