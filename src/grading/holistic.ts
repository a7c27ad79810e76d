/**
 * Holistic mode (RaR's implicit aggregation): the whole rubric goes to the judge in one
 * call, which answers one Likert score; the score normalised to [0, 1] is the item's
 * score. Implemented as a rubric transformation, so the engine, cache and results are
 * the same as for any ordinal criterion.
 */
import { RubricateError } from '../errors.js';
import { memoizedRubricHash } from '../rubric/hashing.js';
import type { Criterion, Item } from '../rubric/schema.js';

export const holisticCriterionId = 'holistic';

function formatPoints(points: number): string {
  return points > 0 ? `+${points}` : String(points);
}

export function holisticItem(item: Item, levels = 10): Item {
  if (!Number.isInteger(levels) || levels < 2) throw new RubricateError('CONFIG_INVALID', 'the holistic scale needs at least 2 levels', { field: 'likert-levels' });
  const rubricLines = item.rubric.criteria.map((criterion) => `- (${formatPoints(criterion.points)}) ${criterion.text}`).join('\n');
  const criterion: Criterion = {
    id: holisticCriterionId,
    text: `Rate how well the response satisfies the rubric below, taken as a whole, from 1 (fails it entirely) to ${levels} (satisfies every positive item and falls into no pitfall). Items carry points: weigh them accordingly; negative items describe pitfalls that should lower the rating when the response falls into them.\n\nRubric:\n${rubricLines}`,
    points: 1,
    tags: [],
    kind: 'principle',
    scale: { type: 'ordinal', choices: Array.from({ length: levels }, (_, index) => ({ label: String(index + 1) })) },
  };
  return {
    ...item,
    rubric: { id: `${item.rubric.id}:holistic`, criteria: [criterion] },
    metadata: { ...item.metadata, holistic: { levels, source_rubric_id: item.rubric.id, source_rubric_hash: memoizedRubricHash(item.rubric), source_criteria: item.rubric.criteria.length } },
  };
}
