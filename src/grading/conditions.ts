/**
 * Conditional criteria at grading time: whether a criterion applies, read from its parents'
 * results (the rubric's graph was checked when it was read, `rubric/conditions.ts`). A condition
 * that fails makes the criterion "not applicable": skipped, never scored 0, left out of every
 * scoring's sums. A parent in error leaves the condition undecided: the child is in error too;
 * in a dry run, where no call is answered, every child is counted (an upper bound).
 */
import { RubricateError } from '../errors.js';
import type { Criterion, CriterionCondition } from '../rubric/schema.js';
import type { CriterionResult } from './types.js';

/** The skip reason of a criterion whose condition does not hold. */
export const notApplicableReason = 'not_applicable';

export type Applicability =
  | { applies: true }
  | { applies: false; result: CriterionResult };

function holds(condition: CriterionCondition, parent: CriterionResult): boolean {
  const verdict = parent.verdict!;
  if (typeof condition.verdict === 'boolean') return verdict.met === condition.verdict;
  return verdict.label !== undefined && condition.verdict.includes(verdict.label);
}

/**
 * Whether `criterion` applies, given its parents' results (all graded before it). A failed
 * condition decides it even when another parent is in error; otherwise an errored parent makes
 * it an error, a gated parent gates it, and a parent skipped for any other reason (not applicable
 * itself, or not assessed) makes it not applicable.
 */
export function applicability(criterion: Criterion, results: ReadonlyMap<string, CriterionResult>): Applicability {
  const source = criterion.check ? 'check' : 'judge';
  const notApplicable = (): Applicability => ({ applies: false, result: { criterion, source, status: 'skipped', skipReason: notApplicableReason } });
  let errored: string | undefined;
  let gated = false;
  let skipped = false;
  for (const condition of criterion.when ?? []) {
    const parent = results.get(condition.criterion);
    if (!parent) throw new RubricateError('INTERNAL', `criterion ${criterion.id} was reached before its parent ${condition.criterion}`);
    // A dry run answers nothing (JUDGE_DRY_RUN): the child is counted as if it applied, so the estimate is an upper bound.
    if (parent.status === 'error' && parent.error?.code === 'JUDGE_DRY_RUN') continue;
    if (parent.status === 'error') errored ??= condition.criterion;
    else if (parent.status === 'skipped') {
      if (parent.skipReason === 'gated') gated = true;
      else skipped = true;
    } else if (!holds(condition, parent)) return notApplicable();
  }
  if (errored !== undefined) {
    const error = new RubricateError('CONDITION_UNDECIDED', `criterion ${criterion.id} depends on ${errored}, which is in error: whether it applies cannot be decided`);
    return { applies: false, result: { criterion, source, status: 'error', error: error.toJSON() } };
  }
  if (gated) return { applies: false, result: { criterion, source, status: 'skipped', skipReason: 'gated' } };
  if (skipped) return notApplicable();
  return { applies: true };
}

/**
 * The criteria in waves: those with no condition first, then each depth once its parents are
 * graded (Kahn's order by levels, linear in criteria and conditions). Parents outside `criteria`
 * (graded in an earlier phase, e.g. hard rules under the gate) are already decided.
 */
export function conditionWaves(criteria: readonly Criterion[]): Criterion[][] {
  const order = new Map(criteria.map((criterion, index) => [criterion.id, index]));
  const inSet = new Set(order.keys());
  const waiting = new Map<string, number>();
  const children = new Map<string, Criterion[]>();
  for (const criterion of criteria) {
    const parents = new Set((criterion.when ?? []).map((condition) => condition.criterion).filter((id) => inSet.has(id)));
    waiting.set(criterion.id, parents.size);
    for (const parent of parents) (children.get(parent) ?? children.set(parent, []).get(parent)!).push(criterion);
  }
  const waves: Criterion[][] = [];
  let wave = criteria.filter((criterion) => waiting.get(criterion.id) === 0);
  let placed = 0;
  while (wave.length > 0) {
    waves.push(wave);
    placed += wave.length;
    const next: Criterion[] = [];
    for (const parent of wave) {
      for (const child of children.get(parent.id) ?? []) {
        const left = waiting.get(child.id)! - 1;
        waiting.set(child.id, left);
        if (left === 0) next.push(child);
      }
    }
    // Rubric order inside a wave.
    wave = next.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  }
  if (placed !== criteria.length) throw new RubricateError('INTERNAL', 'the conditions of the rubric form a cycle (normalisation refuses these)');
  return waves;
}
