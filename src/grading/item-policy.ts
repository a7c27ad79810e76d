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

export type CheckRunner = (spec: CheckSpec, response: string, context: CheckContext) => CheckOutcome | Promise<CheckOutcome>;

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
  // Checks that could not decide and fall back to the judge: asked as criteria, recorded as such.
  const undecided = new Map<string, { original: Criterion; reason: string }>();
  const judge = async (criteria: Criterion[]) => {
    if (criteria.length === 0) return;
    const unitResults = await options.judge(subcheckUnits(criteria));
    for (const [id, result] of foldUnits(criteria, unitResults)) {
      const fallback = undecided.get(id);
      const decided = applyAbstainPolicy(result, options.abstain);
      results.set(id, fallback ? { ...decided, criterion: fallback.original, checkUndecided: fallback.reason } : decided);
    }
  };
  const inWaves = (criteria: readonly Criterion[]) => gradeInWaves(item, criteria, { results, undecided }, options, judge);
  let gated = false;
  let callsSaved = 0;
  if (rubric.gate === 'hard_rules') {
    // Gatekeeper: hard rules first; one failure zeroes the item and spares the judge the rest.
    await inWaves(rubric.criteria.filter((criterion) => criterion.kind === 'hard_rule'));
    gated = rubric.criteria.some((criterion) => criterion.kind === 'hard_rule' && failsHardRule(results.get(criterion.id)));
    const principles = rubric.criteria.filter((criterion) => criterion.kind !== 'hard_rule');
    if (gated) callsSaved = await gatePrinciples(item, principles, results, options);
    else await inWaves(principles);
  } else {
    await inWaves(rubric.criteria);
  }

  const criteria = rubric.criteria.map((criterion) => withCitedSteps(item, results.get(criterion.id)!));
  gated ||= failsItem(criteria, options.abstain);
  // A gated item's score is 0 by rule, even if an ungraded criterion errored.
  const status = criteria.some((result) => result.status === 'error') && !gated ? 'error' : 'ok';
  return { status, criteria, gated, callsSaved };
}

/**
 * A gated item's principles: every one is gated, conditional or not; unconditional checks still
 * run (they cost no call; one that cannot decide is gated too, never sent to the judge). Returns
 * the calls the judge would have been asked first (a conditional principle's calls depend on
 * verdicts never asked).
 */
async function gatePrinciples(item: Item, principles: readonly Criterion[], results: Map<string, CriterionResult>, options: ItemPolicyOptions): Promise<number> {
  const spared: Criterion[] = [];
  const gatedResult = (criterion: Criterion): CriterionResult => ({ criterion, source: criterion.check ? 'check' : 'judge', status: 'skipped', skipReason: 'gated' });
  for (const criterion of principles) {
    if (criterion.check !== undefined && criterion.when === undefined) {
      const result = await runCheck(item, criterion, options);
      results.set(criterion.id, 'fallback' in result ? gatedResult(criterion) : result);
    } else results.set(criterion.id, gatedResult(criterion));
    if (criterion.check === undefined && criterion.when === undefined) spared.push(criterion);
  }
  return spared.length > 0 ? options.plannedCalls(spared) : 0;
}

/**
 * Criteria graded parents first: checks run locally, the judged ones of a wave go to `judge`
 * together (with the checks that could not decide and fall back to it); a conditional criterion
 * whose condition fails is not applicable and costs no call. A rubric without conditions is one wave.
 */
async function gradeInWaves(
  item: Item,
  criteria: readonly Criterion[],
  state: { results: Map<string, CriterionResult>; undecided: Map<string, { original: Criterion; reason: string }> },
  options: ItemPolicyOptions,
  judge: (criteria: Criterion[]) => Promise<void>,
): Promise<void> {
  for (const wave of conditionWaves(criteria)) {
    const judged: Criterion[] = [];
    for (const criterion of wave) {
      const decided = applicability(criterion, state.results);
      if (!decided.applies) state.results.set(criterion.id, decided.result);
      else if (criterion.check === undefined) judged.push(criterion);
      else {
        const result = await runCheck(item, criterion, options);
        if (!('fallback' in result)) state.results.set(criterion.id, result);
        else {
          state.undecided.set(criterion.id, { original: criterion, reason: result.fallback.reason });
          judged.push(judgeFallbackCriterion(criterion));
        }
      }
    }
    await judge(judged);
  }
}

/**
 * The criterion the judge is asked when its check could not decide: its text, with the
 * reference answer the check compared against (a check's `answer` parameter), so the judge
 * decides the same question.
 */
function judgeFallbackCriterion(criterion: Criterion): Criterion {
  const { check, ...rest } = criterion;
  const answer = typeof check?.answer === 'string' ? check.answer : undefined;
  return { ...rest, text: answer === undefined ? criterion.text : `${criterion.text} (The reference final answer is: ${answer}. Met when the response's final answer is equivalent to it.)` };
}

async function runCheck(item: Item, criterion: Criterion, options: Pick<ItemPolicyOptions, 'checkRunner' | 'checkMode'>): Promise<CriterionResult | { fallback: { reason: string } }> {
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
    const outcome = await runner(criterion.check!, item.response, { prompt, mode: options.checkMode, ...(item.trajectory ? { trajectory: item.trajectory } : {}) });
    if (outcome.undecided) {
      if (outcome.undecided.fallback === 'judge') return { fallback: { reason: outcome.undecided.reason } };
      // Undecided is never a fail: without a fallback it is an error for this criterion, with its reason.
      return { criterion, source: 'check', status: 'error', error: new RubricateError('CHECK_UNDECIDED', `check ${criterion.check!.type} could not decide: ${outcome.undecided.reason}`).toJSON() };
    }
    const verdict: CriterionVerdict = { met: outcome.passed, value: outcome.passed ? 1 : 0, source: 'check' };
    if (outcome.detail) verdict.explanation = outcome.detail;
    if (outcome.tests) verdict.tests = outcome.tests;
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
