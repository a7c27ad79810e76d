/**
 * Hierarchical criteria: a criterion with `subchecks` is judged as one binary question per
 * sub-check, then folded back by its rule. The judge never sees the parent criterion.
 */
import { RubricateError } from '../errors.js';
import type { Criterion } from '../rubric/schema.js';
import type { CriterionResult } from './types.js';

function partsOf(criterion: Criterion): Criterion[] {
  return (criterion.subchecks ?? []).map((text, index): Criterion => ({ id: `${criterion.id}/${index + 1}`, text, points: 1, tags: [], kind: criterion.kind }));
}

/** What the judge is asked: plain criteria as they are, hierarchical ones as their sub-checks. */
export function subcheckUnits(criteria: Criterion[]): Criterion[] {
  return criteria.flatMap((criterion) => (criterion.subchecks ? partsOf(criterion) : [criterion]));
}

/** Each criterion's result from the results of its units (see `subcheckUnits`). */
export function foldUnits(criteria: Criterion[], unitResults: ReadonlyMap<string, CriterionResult>): Map<string, CriterionResult> {
  const results = new Map<string, CriterionResult>();
  for (const criterion of criteria) {
    if (!criterion.subchecks) results.set(criterion.id, unitResults.get(criterion.id)!);
    else results.set(criterion.id, foldSubchecks(criterion, partsOf(criterion).map((part) => unitResults.get(part.id)!)));
  }
  return results;
}

/**
 * A hierarchical criterion from its sub-checks: `all` must pass; `fraction` passed; or
 * `penalty`: 1 minus a penalty per failed check, floored at 0. Met means every check passed.
 * A sub-check in error makes the criterion an error that names it.
 */
function foldSubchecks(criterion: Criterion, parts: CriterionResult[]): CriterionResult {
  const failedPart = parts.find((part) => part.status !== 'ok');
  if (failedPart) {
    const error = failedPart.error ?? new RubricateError('INTERNAL', 'sub-check not graded').toJSON();
    return { criterion, source: 'judge', status: 'error', error: { ...error, message: `sub-check "${failedPart.criterion.text}": ${error.message}` } };
  }
  const unassessed = parts.find((part) => part.verdict!.cannotAssess);
  if (unassessed) {
    // One part the judge could not assess leaves the whole criterion unassessed.
    return { criterion, source: 'judge', status: 'ok', verdict: { met: false, value: 0, cannotAssess: true, source: 'judge', explanation: `sub-check "${unassessed.criterion.text}" could not be assessed` } };
  }
  const passed = parts.filter((part) => part.verdict!.met).length;
  const total = parts.length;
  const rule = criterion.subcheckRule ?? 'all';
  const value =
    rule === 'fraction' ? passed / total : rule === 'penalty' ? Math.max(0, 1 - (criterion.subcheckPenalty ?? 1 / total) * (total - passed)) : passed === total ? 1 : 0;
  const subchecks = parts.map((part) => ({ text: part.criterion.text, met: part.verdict!.met, ...(part.verdict!.explanation ? { explanation: part.verdict!.explanation } : {}) }));
  return {
    criterion,
    source: 'judge',
    status: 'ok',
    verdict: { met: passed === total, value, source: 'judge', explanation: `${passed} of ${total} checks passed (${rule})`, subchecks },
  };
}
