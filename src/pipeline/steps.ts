/**
 * Process rewards: an item with step-scoped criteria is graded as one item per trajectory step
 * (src/rubric/steps.ts: the trajectory cut after the step, the step criteria asked about it),
 * plus the item itself for its other criteria, each through the grader's ordinary path (store,
 * in-flight dedupe, retries, jury). Each step criterion keeps every step's verdict and folds
 * their values by the rubric's `step_aggregate` (src/scoring/step-aggregate.ts). A step in error
 * makes the criterion an error, so the item has no reward: it is never scored on the steps that
 * worked. A trajectory over `--max-steps` steps is refused before any call.
 */
import type { GradedItem } from '../engine/engine.js';
import { emptyUsage } from '../engine/usage.js';
import { RubricateError } from '../errors.js';
import type { CriterionResult, StepResult } from '../grading/types.js';
import type { Criterion, Item, StepAggregate } from '../rubric/schema.js';
import { hasStepCriteria, itemAtStep, tooManySteps, trajectoryStepSpans } from '../rubric/steps.js';
import { hasPerTurnCriteria } from '../rubric/turns.js';
import { gradeByTurn, gradedFromParts } from './turns.js';
import { aggregateSteps, stepAggregateName } from '../scoring/step-aggregate.js';

const defaultStepAggregate: StepAggregate = { rule: 'mean' };

/** An item graded as its rubric asks: turn by turn (per-turn criteria), step by step (step-scoped criteria), or whole. */
export function gradeByParts(item: Item, grade: (part: Item) => Promise<GradedItem>, maxSteps: number): Promise<GradedItem> {
  if (hasPerTurnCriteria(item.rubric)) return gradeByTurn(item, grade);
  if (hasStepCriteria(item.rubric)) return gradeBySteps(item, grade, maxSteps);
  return grade(item);
}

/** Grades an item step by step through `grade` (which grades one item whole) and folds the steps. */
export async function gradeBySteps(item: Item, grade: (part: Item) => Promise<GradedItem>, maxSteps: number): Promise<GradedItem> {
  const spans = trajectoryStepSpans(item.trajectory ?? []);
  if (spans.length > maxSteps) return refused(item, tooManySteps(spans.length, maxSteps));
  const stepCriteria = item.rubric.criteria.filter((criterion) => criterion.scope === 'step');
  const wholeCriteria = item.rubric.criteria.filter((criterion) => criterion.scope !== 'step');
  const [whole, ...steps] = await Promise.all([
    wholeCriteria.length > 0 ? grade({ ...item, rubric: { ...item.rubric, criteria: wholeCriteria } }) : undefined,
    ...spans.map((_, index) => grade(itemAtStep(item, index + 1, stepCriteria, spans))),
  ]);
  const gradings = [...(whole ? [whole] : []), ...steps.map((graded) => graded!)];
  const aggregate = item.rubric.stepAggregate ?? defaultStepAggregate;
  const wholeResults = new Map((whole?.criteria ?? []).map((result) => [result.criterion.id, result]));
  const stepResults = steps.map((graded) => new Map(graded!.criteria.map((result) => [result.criterion.id, result])));
  const criteria = item.rubric.criteria.map((criterion): CriterionResult => {
    if (criterion.scope !== 'step') return wholeResults.get(criterion.id)!;
    // The result keeps the criterion as written, not as asked at each step.
    const perStep = stepResults.map((results, index) => ({ step: index + 1, result: { ...results.get(criterion.id)!, criterion } }));
    return foldSteps(criterion, perStep, aggregate);
  });
  return gradedFromParts(item, criteria, gradings);
}

/** Every criterion in error with the bound's reason, no call made. */
function refused(item: Item, error: RubricateError): GradedItem {
  const serialized = error.toJSON();
  return {
    item,
    status: 'error',
    criteria: item.rubric.criteria.map((criterion) => ({ criterion, source: 'judge', status: 'error', error: serialized })),
    gated: false,
    usage: emptyUsage(),
  };
}

function stepResult(step: number, result: CriterionResult): StepResult {
  return { step, status: result.status, ...(result.verdict ? { verdict: result.verdict } : {}), ...(result.error ? { error: result.error } : {}) };
}

/**
 * One step criterion's result from its steps: the first step in error makes it an error (its
 * message names the step); otherwise the fold of the graded steps' values (skipped steps left out).
 */
export function foldSteps(criterion: Criterion, perStep: ReadonlyArray<{ step: number; result: CriterionResult }>, aggregate: StepAggregate): CriterionResult {
  const source = perStep[0]?.result.source ?? 'judge';
  const process = { aggregate, results: perStep.map(({ step, result }) => stepResult(step, result)) };
  const failed = perStep.find(({ result }) => result.status === 'error');
  if (failed) {
    const error = failed.result.error ?? new RubricateError('INTERNAL', 'step not graded').toJSON();
    return { criterion, source, status: 'error', error: { ...error, message: `step ${failed.step}: ${error.message}` }, process };
  }
  const verdicts = perStep.filter(({ result }) => result.status === 'ok' && result.verdict).map(({ result }) => result.verdict!);
  if (verdicts.length === 0) return { criterion, source, status: 'skipped', skipReason: perStep[0]?.result.skipReason ?? 'no step graded', process };
  const value = aggregateSteps(
    verdicts.map((verdict) => verdict.value),
    aggregate,
  );
  const met = value >= (criterion.scale?.type === 'ordinal' ? (criterion.scale.metThreshold ?? 1) : 0.5);
  const metCount = verdicts.filter((verdict) => verdict.met).length;
  return { criterion, source, status: 'ok', verdict: { met, value, source, explanation: `${stepAggregateName(aggregate)} over ${verdicts.length} steps (${metCount} met)` }, process };
}
