/**
 * How one item is graded, before any judge call: checks run locally, the hard-rule gate
 * (one failed hard rule zeroes the item and spares the judge the rest), hierarchical
 * criteria asked as sub-checks, and the trajectory steps a verdict cites. Judging itself
 * is handed to the engine through `judge`.
 */
import type { CheckContext, CheckMode, CheckOutcome } from '../checks/types.js';
import { RubricateError, toRubricateError } from '../errors.js';
import type { CheckSpec, Criterion, Item } from '../rubric/schema.js';
import { citedSteps, trajectorySteps } from '../trajectory/trajectory.js';
import { foldUnits, subcheckUnits } from './subchecks.js';
import type { CriterionResult, CriterionVerdict } from './types.js';
import type { AbstainPolicy } from '../spec/run-spec.js';
import { applyAbstainPolicy, failsHardRule, failsItem } from './abstain.js';
import { applicability, conditionWaves } from './conditions.js';

export type CheckRunner = (spec: CheckSpec, response: string, context: CheckContext) => CheckOutcome;

export interface ItemPolicyOptions {
  checkRunner?: CheckRunner;
  checkMode: CheckMode;
  /** How a criterion the judge could not assess counts (`--abstain`; absent: the judge was not offered it). */
  abstain?: AbstainPolicy;
  /** Judges criteria that have no check and no sub-checks: one result per criterion id. */
  judge(criteria: Criterion[]): Promise<Map<string, CriterionResult>>;
  /** Judge calls these criteria would take (what the gate spares; nothing is sent). */
  plannedCalls(criteria: Criterion[]): number;
}

export interface ItemGrading {
  status: 'ok' | 'error';
  /** In rubric order. */
  criteria: CriterionResult[];
  /** A failed hard rule zeroed the item and its judged criteria were not sent, or (`--abstain fail`) an abstention failed it. */
  gated: boolean;
  /** Judge calls the gate spared. */
  callsSaved: number;
}

export async function gradeItemCriteria(item: Item, options: ItemPolicyOptions): Promise<ItemGrading> {
  const results = new Map<string, CriterionResult>();
  const rubric = item.rubric;
  const judge = async (criteria: Criterion[]) => {
    if (criteria.length === 0) return;
    const unitResults = await options.judge(subcheckUnits(criteria));
    for (const [id, result] of foldUnits(criteria, unitResults)) results.set(id, applyAbstainPolicy(result, options.abstain));
  };
  let gated = false;
  let callsSaved = 0;
  if (rubric.gate === 'hard_rules') {
    // Gatekeeper: hard rules first; one failure zeroes the item and spares the judge the rest.
    await gradeInWaves(item, rubric.criteria.filter((criterion) => criterion.kind === 'hard_rule'), results, options, judge);
    gated = rubric.criteria.some((criterion) => criterion.kind === 'hard_rule' && failsHardRule(results.get(criterion.id)));
    const principles = rubric.criteria.filter((criterion) => criterion.kind !== 'hard_rule');
    if (gated) {
      // Every principle is gated, conditional or not; unconditional checks still run (they cost no call).
      const spared: Criterion[] = [];
      for (const criterion of principles) {
        if (criterion.check !== undefined && criterion.when === undefined) results.set(criterion.id, runCheck(item, criterion, options));
        else results.set(criterion.id, { criterion, source: criterion.check ? 'check' : 'judge', status: 'skipped', skipReason: 'gated' });
        if (criterion.check === undefined && criterion.when === undefined) spared.push(criterion);
      }
      // What the judge would have been asked first (a conditional principle's calls depend on verdicts never asked).
      if (spared.length > 0) callsSaved = options.plannedCalls(spared);
    } else {
      await gradeInWaves(item, principles, results, options, judge);
    }
  } else {
    await gradeInWaves(item, rubric.criteria, results, options, judge);
  }

  const criteria = rubric.criteria.map((criterion) => withCitedSteps(item, results.get(criterion.id)!));
  gated ||= failsItem(criteria, options.abstain);
  // A gated item's score is 0 by rule, even if an ungraded criterion errored.
  const status = criteria.some((result) => result.status === 'error') && !gated ? 'error' : 'ok';
  return { status, criteria, gated, callsSaved };
}

/**
 * Criteria graded parents first: checks run locally, the judged ones of a wave go to `judge`
 * together; a conditional criterion whose condition fails is not applicable and costs no call.
 * A rubric without conditions is one wave.
 */
async function gradeInWaves(item: Item, criteria: readonly Criterion[], results: Map<string, CriterionResult>, options: ItemPolicyOptions, judge: (criteria: Criterion[]) => Promise<void>): Promise<void> {
  for (const wave of conditionWaves(criteria)) {
    const judged: Criterion[] = [];
    for (const criterion of wave) {
      const decided = applicability(criterion, results);
      if (!decided.applies) results.set(criterion.id, decided.result);
      else if (criterion.check !== undefined) results.set(criterion.id, runCheck(item, criterion, options));
      else judged.push(criterion);
    }
    await judge(judged);
  }
}

function runCheck(item: Item, criterion: Criterion, options: Pick<ItemPolicyOptions, 'checkRunner' | 'checkMode'>): CriterionResult {
  const runner = options.checkRunner;
  if (!runner) {
    return {
      criterion,
      source: 'check',
      status: 'error',
      error: new RubricateError('CHECK_INVALID', `no check runner available for check type ${criterion.check!.type}`).toJSON(),
    };
  }
  try {
    const prompt = [...item.prompt].reverse().find((message) => message.role === 'user')?.content ?? '';
    const outcome = runner(criterion.check!, item.response, { prompt, mode: options.checkMode, ...(item.trajectory ? { trajectory: item.trajectory } : {}) });
    const verdict: CriterionVerdict = { met: outcome.passed, value: outcome.passed ? 1 : 0, source: 'check' };
    if (outcome.detail) verdict.explanation = outcome.detail;
    return { criterion, source: 'check', status: 'ok', verdict };
  } catch (error) {
    return { criterion, source: 'check', status: 'error', error: toRubricateError(error, 'CHECK_INVALID').toJSON() };
  }
}

/** For trajectory items, keeps the step numbers a verdict's explanation cites. */
function withCitedSteps(item: Item, result: CriterionResult): CriterionResult {
  const verdict = result.verdict;
  if (!item.trajectory || !verdict?.explanation || verdict.subchecks) return result;
  const steps = citedSteps(verdict.explanation, trajectorySteps(item.trajectory).length);
  return steps.length > 0 ? { ...result, verdict: { ...verdict, steps } } : result;
}
