/**
 * Human labels laid over a results report (`rubricate report --labels`): each labelled verdict
 * gets its raters' answers beside it, and the judge's agreement with them is computed exactly
 * as `rubricate meta --format results --labels` computes it (same join, same metrics, grouped
 * by criterion and by tag), so the report and `meta` never disagree.
 */
import { basename } from 'node:path';
import { RubricateError } from '../errors.js';
import { loadLabels } from '../meta/labels.js';
import { metaFromResults } from '../meta/results-meta.js';
import type { CollectedRun } from './collect.js';
import type { LabelsOverlay } from './types.js';

const invalidLinesKept = 100;

/** The labels of `labelsFile` over the run collected from `resultsFile`. */
export async function overlayLabels(run: CollectedRun, resultsFile: string, labelsFile: string, onWarning?: (message: string) => void): Promise<LabelsOverlay> {
  const invalidLines: LabelsOverlay['invalidLines'] = [];
  let invalidLineCount = 0;
  const index = await loadLabels(labelsFile, {
    onInvalid: (error) => {
      invalidLineCount += 1;
      const message = error.toJSON().message;
      if (invalidLines.length < invalidLinesKept) invalidLines.push({ line: Number(error.details.line ?? 0), message });
      onWarning?.(message);
    },
  });
  // A labels file without one label (empty, or every line invalid) is a mistake to say, not an overlay of nothing.
  if (index.pairs === 0 && index.cannotAssessRatings === 0) {
    const lines = invalidLineCount > 0 ? ` (its ${invalidLineCount} line${invalidLineCount === 1 ? ' is' : 's are'} invalid)` : ' (it is empty)';
    throw new RubricateError('INPUT_INVALID', `the labels file has no labels${lines}: give the labels JSONL of meta --labels, or a report's review export`, { file: labelsFile, field: 'labels' });
  }
  // Each labelled criterion of the first item with each id (as the join reads it).
  const data = run.data;
  const positions: number[] = [];
  for (const [id, itemIndex] of run.indexById) {
    const labels = index.byItem.get(id);
    if (!labels) continue;
    for (let position = data.items.criteriaOffsets[itemIndex]; position < data.items.criteriaOffsets[itemIndex + 1]; position += 1) {
      const raters = labels.get(data.strings[data.criteria.ids[position]]);
      if (!raters) continue;
      const met = raters.filter(Boolean).length;
      positions.push(position, met, raters.length - met);
    }
  }
  let agreement: LabelsOverlay['agreement'] = null;
  let problem: string | null = null;
  let join: LabelsOverlay['join'] = null;
  try {
    const report = await metaFromResults(resultsFile, index, { groupBy: ['criterion', 'tag'] });
    const { inputs: _inputs, join: joined, problems: _problems, ...metrics } = report;
    agreement = metrics;
    join = joined;
  } catch (error) {
    // Nothing to compare (no labelled verdict): the report says why instead of failing.
    if (!RubricateError.isInstance(error) || error.code !== 'INPUT_INVALID') throw error;
    problem = error.message;
  }
  return { label: basename(labelsFile), positions, agreement, problem, join, invalidLines, invalidLineCount };
}
