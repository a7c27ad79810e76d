/**
 * Holistic mode (RaR's implicit aggregation): the whole rubric goes to the judge in one
 * call, which answers one Likert score; the score normalised to [0, 1] is the item's
 * score. Implemented as a rubric transformation, so the engine, cache and results are
 * the same as for any ordinal criterion.
 */
import { RubricateError } from '../errors.js';
import { memoizedRubricHash } from '../rubric/hashing.js';
import type { Criterion, Item, Rubric } from '../rubric/schema.js';

export const holisticCriterionId = 'holistic';

function formatPoints(points: number): string {
  return points > 0 ? `+${points}` : String(points);
}

/** The rubric as the lines a whole-rubric judgement reads: `- (+5) text`, one per criterion. */
export function rubricLines(rubric: Rubric): string {
  return rubric.criteria.map((criterion) => `- (${formatPoints(criterion.points)}) ${criterion.text}`).join('\n');
}

/** The one Likert criterion that rates a response on the whole rubric (holistic mode, listwise holistic judging). */
export function holisticCriterion(rubric: Rubric, levels = 10): Criterion {
  if (!Number.isInteger(levels) || levels < 2) throw new RubricateError('CONFIG_INVALID', 'the holistic scale needs at least 2 levels', { field: 'likert-levels' });
  return {
    id: holisticCriterionId,
    text: `Rate how well the response satisfies the rubric below, taken as a whole, from 1 (fails it entirely) to ${levels} (satisfies every positive item and falls into no pitfall). Items carry points: weigh them accordingly; negative items describe pitfalls that should lower the rating when the response falls into them.\n\nRubric:\n${rubricLines(rubric)}`,
    points: 1,
    tags: [],
    kind: 'principle',
    scale: { type: 'ordinal', choices: Array.from({ length: levels }, (_, index) => ({ label: String(index + 1) })) },
  };
}

export function holisticItem(item: Item, levels = 10): Item {
  const criterion = holisticCriterion(item.rubric, levels);
  return {
    ...item,
    rubric: { id: `${item.rubric.id}:holistic`, criteria: [criterion] },
    metadata: { ...item.metadata, holistic: { levels, source_rubric_id: item.rubric.id, source_rubric_hash: memoizedRubricHash(item.rubric), source_criteria: item.rubric.criteria.length } },
  };
}
