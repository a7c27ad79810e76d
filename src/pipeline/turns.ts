/**
 * Per-turn grading: an item whose criteria are about several turns of its conversation is graded
 * as one item per turn (the conversation up to that turn as context, the turn as the response,
 * the criteria about that turn), each through the grader's ordinary path (checks, gate, judges,
 * jury, cascade). A criterion on several turns keeps each turn's verdict and folds them by the
 * rubric's `turn_aggregate`: the mean of their values, their minimum, or met only when all are.
 * A turn in error makes the criterion an error: it is never scored on the turns that worked.
 */
import type { GradedItem } from '../engine/engine.js';
import { addUsage, emptyUsage } from '../engine/usage.js';
import { RubricateError } from '../errors.js';
import type { CriterionResult, CriterionVerdict, TurnResult } from '../grading/types.js';
import type { Criterion, Item, TurnAggregate } from '../rubric/schema.js';
import { assistantTurnCount, itemAtTurn, turnsOf } from '../rubric/turns.js';
import { mean } from '../statistics/descriptive.js';

/** Grades an item turn by turn through `grade` (which grades one item whole) and folds the turns. */
export async function gradeByTurn(item: Item, grade: (atTurn: Item) => Promise<GradedItem>): Promise<GradedItem> {
  const total = assistantTurnCount(item);
  const criteriaByTurn = new Map<number, Criterion[]>();
  for (const criterion of item.rubric.criteria) {
    for (const turn of turnsOf(criterion, total)) {
      const criteria = criteriaByTurn.get(turn) ?? [];
      criteria.push(criterion);
      criteriaByTurn.set(turn, criteria);
    }
  }
  const turns = [...criteriaByTurn.keys()].sort((left, right) => left - right);
  const gradings = await Promise.all(turns.map((turn) => grade(itemAtTurn(item, turn, criteriaByTurn.get(turn)!))));
  const resultAt = new Map<number, Map<string, CriterionResult>>();
  turns.forEach((turn, index) => resultAt.set(turn, new Map(gradings[index].criteria.map((result) => [result.criterion.id, result]))));
  const aggregate = item.rubric.turnAggregate ?? 'mean';
  const criteria = item.rubric.criteria.map((criterion): CriterionResult => {
    const perTurn = turnsOf(criterion, total).map((turn) => ({ turn, result: resultAt.get(turn)!.get(criterion.id)! }));
    // A criterion about the last turn is graded exactly as it is without turns.
    if (criterion.turn === undefined) return perTurn[0].result;
    return foldTurns(criterion, perTurn, aggregate);
  });
  return gradedFromParts(item, criteria, gradings);
}

/**
 * One item's grading from the gradings of its parts (turns, steps, the whole): their usage and
 * calls added up, from the store only when every part was. `--abstain fail`: an abstention in any
 * part fails the item, as it would the item of that part.
 */
export function gradedFromParts(item: Item, criteria: CriterionResult[], gradings: readonly GradedItem[]): GradedItem {
  const usage = emptyUsage();
  for (const graded of gradings) addUsage(usage, graded.usage);
  const fromStore = gradings.every((graded) => graded.fromStore === true);
  const gated = gradings.some((graded) => graded.gated);
  return {
    item,
    status: criteria.some((result) => result.status === 'error') && !gated ? 'error' : 'ok',
    criteria,
    gated,
    usage,
    ...(fromStore ? { fromStore } : {}),
    ...(gradings.some((graded) => graded.calls) ? { calls: gradings.flatMap((graded) => graded.calls ?? []) } : {}),
  };
}

function turnResult(turn: number, result: CriterionResult): TurnResult {
  return { turn, status: result.status, ...(result.verdict ? { verdict: result.verdict } : {}), ...(result.error ? { error: result.error } : {}) };
}

/** One criterion's result from its turns: the first turn in error makes it an error; otherwise the fold of the graded turns. */
export function foldTurns(criterion: Criterion, perTurn: ReadonlyArray<{ turn: number; result: CriterionResult }>, aggregate: TurnAggregate): CriterionResult {
  const source = perTurn[0]?.result.source ?? 'judge';
  const turns = { aggregate, results: perTurn.map(({ turn, result }) => turnResult(turn, result)) };
  const failed = perTurn.find(({ result }) => result.status === 'error');
  if (failed) {
    const error = failed.result.error ?? new RubricateError('INTERNAL', 'turn not graded').toJSON();
    return { criterion, source, status: 'error', error: { ...error, message: `turn ${failed.turn}: ${error.message}` }, turns };
  }
  const verdicts = perTurn.filter(({ result }) => result.status === 'ok' && result.verdict).map(({ result }) => result.verdict!);
  if (verdicts.length === 0) return { criterion, source, status: 'skipped', skipReason: perTurn[0]?.result.skipReason ?? 'no turn graded', turns };
  return { criterion, source, status: 'ok', verdict: foldVerdicts(criterion, verdicts, aggregate, source), turns };
}

/**
 * mean: the mean value, met when it reaches one half (or the scale's threshold); min: the lowest
 * value, met when every turn is; all: 1 when every turn is met, else 0.
 */
function foldVerdicts(criterion: Criterion, verdicts: readonly CriterionVerdict[], aggregate: TurnAggregate, source: CriterionVerdict['source']): CriterionVerdict {
  const allMet = verdicts.every((verdict) => verdict.met);
  const values = verdicts.map((verdict) => verdict.value);
  let value: number;
  let met: boolean;
  if (aggregate === 'mean') {
    value = mean(values);
    met = value >= (criterion.scale?.type === 'ordinal' ? (criterion.scale.metThreshold ?? 1) : 0.5);
  } else if (aggregate === 'min') {
    value = Math.min(...values);
    met = allMet;
  } else {
    value = allMet ? 1 : 0;
    met = allMet;
  }
  const labels = new Set(verdicts.map((verdict) => verdict.label));
  const [label] = labels;
  const metCount = verdicts.filter((verdict) => verdict.met).length;
  return { met, value, source, ...(labels.size === 1 && label !== undefined ? { label } : {}), explanation: `${aggregate} over ${verdicts.length} turns (${metCount} met)` };
}
