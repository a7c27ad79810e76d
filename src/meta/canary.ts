/**
 * The judge drift canary: a golden labelled set graded by a judge, pinned as a baseline (the
 * judge's resolved identity, its agreement with the labels and that agreement's bootstrap
 * interval, every verdict), then graded again on each run and compared. Drift is any of: the
 * identity changed (a provider's alias now resolving to another snapshot, another template or
 * setting), the agreement left the baseline's interval, or more verdicts flipped than that
 * interval's half-width allows.
 */
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import { zodIssueError } from '../util/zod-issue.js';
import { readResults, type JudgeInfo } from '../results/results.js';
import type { ConfidenceInterval } from '../statistics/bootstrap.js';
import { metaFromResults } from './results-meta.js';
import { scriptedLabel } from '../judges/scripted.js';
import type { LabelIndex } from './labels.js';
import type { BootstrapOptions } from '../statistics/bootstrap.js';

/** A golden set is small by design: more verdicts than this is not a canary (refused before anything is compared). */
export const maxCanaryVerdicts = 100_000;

/** What the canary pins about the judge: each field, when it changes, is drift. */
const identitySchema = z.object({
  judge: z.string(),
  model: z.string(),
  /** The models the provider's replies named (each verdict's `judge_model`, else `model`), sorted. */
  resolved_models: z.array(z.string()),
  template_version: z.string(),
  template_sha256: z.string().nullable(),
  mode: z.string(),
  /** The sampling and request settings a verdict depends on, as the results record them (secrets already redacted there). */
  settings: z.record(z.string(), z.unknown()),
});
export type JudgeIdentity = z.infer<typeof identitySchema>;

const intervalSchema = z.object({ lower: z.number(), upper: z.number(), confidence: z.number(), resamples: z.number() });

export const baselineSchema = z.object({
  kind: z.literal('rubricate-canary-baseline'),
  version: z.literal(1),
  /** The golden items' and labels' sha256: another golden set is not compared with this baseline. */
  golden: z.object({ items_sha256: z.string(), labels_sha256: z.string() }),
  identity: identitySchema,
  /** The verdicts were made up (the scripted judge or `rubricate fake-judge`), not a model's. */
  made_up: z.boolean(),
  agreement: z.object({ accuracy: z.number(), interval: intervalSchema, pairs: z.number() }),
  /** Every judge verdict: [item id, criterion id, met]. */
  verdicts: z.array(z.tuple([z.string(), z.string(), z.boolean()])),
});
export type CanaryBaseline = z.infer<typeof baselineSchema>;

/** A graded golden set: who judged it and what each verdict was. */
export interface CanaryRun {
  identity: JudgeIdentity;
  /** Made-up verdicts (the scripted judge or `rubricate fake-judge`): labelled wherever they are shown. */
  madeUp: boolean;
  agreement: { accuracy: number; interval: ConfidenceInterval; pairs: number };
  verdicts: Array<[string, string, boolean]>;
}

/** Reads a results file of the golden set: the judge's identity, its verdicts, and its agreement with the labels. */
export async function readCanaryRun(resultsFile: string, labels: LabelIndex, bootstrap: BootstrapOptions): Promise<CanaryRun> {
  let identity: JudgeIdentity | undefined;
  const resolved = new Set<string>();
  const verdicts: Array<[string, string, boolean]> = [];
  let madeUp = false;
  for await (const entry of readResults(resultsFile)) {
    if (entry.kind === 'invalid') throw entry.error;
    const { record } = entry;
    if (!record.judge) throw new RubricateError('INPUT_INVALID', `results line of item ${record.id} names no judge`, { file: resultsFile, line: entry.line });
    const { id, model } = record.judge;
    identity ??= identityOfJudge(record.judge);
    madeUp ||= model === 'scripted' || id.startsWith('scripted:') || record.criteria.some((criterion) => criterion.explanation?.includes(scriptedLabel) === true);
    for (const criterion of record.criteria) {
      if (criterion.source !== 'judge' || criterion.status !== 'ok' || typeof criterion.met !== 'boolean') continue;
      resolved.add(typeof criterion.judge_model === 'string' ? criterion.judge_model : model);
      verdicts.push([record.id, criterion.id, criterion.met]);
      if (verdicts.length > maxCanaryVerdicts) throw new RubricateError('LIMIT_EXCEEDED', `the golden set has more than ${maxCanaryVerdicts} verdicts: a canary set is small (pick a labelled sample)`, { file: resultsFile });
    }
  }
  if (!identity || verdicts.length === 0) throw new RubricateError('INPUT_INVALID', 'the golden set gave no judge verdict to compare', { file: resultsFile });
  const meta = await metaFromResults(resultsFile, labels, bootstrap);
  const { accuracy, intervals, pairs } = meta.overall;
  if (accuracy === null || intervals.accuracy === null) throw new RubricateError('INPUT_INVALID', 'the golden set\'s agreement with its labels has no interval: give labels for its criteria and --bootstrap-resamples above 0', { file: resultsFile });
  return { identity: { ...identity, resolved_models: [...resolved].sort() }, madeUp, agreement: { accuracy, interval: intervals.accuracy, pairs }, verdicts };
}

/** The identity a run's judge record gives (a results line's `judge`, the Grader's `judgeInfo`); the resolved models come from the verdicts. */
export function identityOfJudge(judge: JudgeInfo): JudgeIdentity {
  const { id, model, template_version: templateVersion, template_sha256: templateSha256, mode, settings, temperature, max_tokens: maxTokens, seed, verdict, abstain, alignment } = judge;
  return { judge: id, model, resolved_models: [], template_version: templateVersion, template_sha256: templateSha256 ?? null, mode, settings: { ...(settings ?? {}), temperature, max_tokens: maxTokens, seed, verdict, abstain, alignment } };
}

/** The identity fields that differ (compared as JSON), optionally leaving some out. */
export function changedIdentityFields(baseline: JudgeIdentity, current: JudgeIdentity, ignore: ReadonlyArray<keyof JudgeIdentity> = []): Array<keyof JudgeIdentity> {
  return (Object.keys(baseline) as Array<keyof JudgeIdentity>).filter((key) => !ignore.includes(key) && JSON.stringify(baseline[key]) !== JSON.stringify(current[key]));
}

export interface DriftReport {
  drift: boolean;
  /** Either run's verdicts were made up (the scripted judge or `rubricate fake-judge`), not a model's. */
  made_up: boolean;
  reasons: string[];
  identity: { baseline: JudgeIdentity; current: JudgeIdentity; changed: string[] };
  agreement: { baseline: number; interval: ConfidenceInterval; current: number; inside: boolean };
  flips: { compared: number; flipped: number; rate: number; allowed_rate: number; examples: Array<{ id: string; criterion_id: string; baseline: boolean; current: boolean }> };
}

/** Flipped verdicts a report lists (the count covers them all). */
const flipExamples = 20;

/** Compares a run with the baseline; `drift` is true when the identity changed or agreement or flips left the baseline's interval. */
export function compareWithBaseline(baseline: CanaryBaseline, current: CanaryRun, options: { maxFlipRate?: number } = {}): DriftReport {
  const changed = changedIdentityFields(baseline.identity, current.identity);
  const { interval } = baseline.agreement;
  const inside = current.agreement.accuracy >= interval.lower && current.agreement.accuracy <= interval.upper;
  const before = new Map(baseline.verdicts.map(([id, criterion, met]) => [JSON.stringify([id, criterion]), met]));
  const examples: DriftReport['flips']['examples'] = [];
  let compared = 0;
  let flipped = 0;
  for (const [id, criterion, met] of current.verdicts) {
    const was = before.get(JSON.stringify([id, criterion]));
    if (was === undefined) continue;
    compared += 1;
    if (was === met) continue;
    flipped += 1;
    if (examples.length < flipExamples) examples.push({ id, criterion_id: criterion, baseline: was, current: met });
  }
  const rate = compared === 0 ? 0 : flipped / compared;
  const allowed = options.maxFlipRate ?? (interval.upper - interval.lower) / 2;
  const reasons: string[] = [];
  for (const key of changed) reasons.push(`judge identity: ${key} changed from ${JSON.stringify(baseline.identity[key])} to ${JSON.stringify(current.identity[key])}`);
  if (!inside) reasons.push(`agreement ${current.agreement.accuracy.toFixed(4)} left the baseline's ${Math.round(interval.confidence * 100)}% interval ${interval.lower.toFixed(4)}–${interval.upper.toFixed(4)}`);
  if (rate > allowed) reasons.push(`${flipped} of ${compared} verdicts flipped (${(rate * 100).toFixed(1)}%, more than the ${(allowed * 100).toFixed(1)}% allowed)`);
  return {
    drift: reasons.length > 0,
    made_up: baseline.made_up || current.madeUp,
    reasons,
    identity: { baseline: baseline.identity, current: current.identity, changed },
    agreement: { baseline: baseline.agreement.accuracy, interval, current: current.agreement.accuracy, inside },
    flips: { compared, flipped, rate, allowed_rate: allowed, examples },
  };
}

/** The baseline a run pins. */
export function baselineOf(run: CanaryRun, golden: CanaryBaseline['golden']): CanaryBaseline {
  return { kind: 'rubricate-canary-baseline', version: 1, golden, identity: run.identity, made_up: run.madeUp, agreement: { ...run.agreement, interval: { ...run.agreement.interval } }, verdicts: run.verdicts };
}

/** Reads a baseline file's JSON; a file that is not one is INPUT_INVALID naming the field. */
export function parseBaseline(value: unknown, file: string): CanaryBaseline {
  const parsed = baselineSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw zodIssueError(parsed.error, { prefix: 'not a canary baseline: ', fieldWhenEmpty: '', details: { file } });
}
