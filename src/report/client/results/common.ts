/** What every part of the results view reads, and the helpers more than one of them uses. */
import { tagGroupOf } from '../common.js';
import { rubricateCriterionMet } from '../decode.js';
import type { ComparisonSummary, LabelsOverlay, ResultsReportPayload, RunData, RunSummary } from '../../types.js';

export interface ResultsContext {
  payload: ResultsReportPayload;
  run: RunData;
  summary: RunSummary;
  /** When the report compares two runs: the baseline run, and the comparison with it. */
  baseline: RunData | null;
  comparison: ComparisonSummary | null;
}

export function resultsContext(payload: ResultsReportPayload): ResultsContext {
  const run = payload.runs[0];
  return { payload: payload, run: run, summary: run.summary, baseline: payload.runs.length > 1 ? payload.runs[1] : null, comparison: payload.comparison };
}

/** Tags by group ("axis:accuracy" is in group axis), the usual HealthBench groups first. */
export function tagGroups(byTag: Record<string, unknown>): { names: string[]; members: Record<string, string[]> } {
  const groups: Record<string, string[]> = {};
  Object.keys(byTag).forEach(function (tag) {
    const group = tagGroupOf(tag);
    (groups[group] = groups[group] || []).push(tag);
  });
  const preferred = ['axis', 'theme', 'tags', 'cluster', 'level', 'physician_agreed_category'];
  const names = Object.keys(groups).sort(function (left, right) {
    let a = preferred.indexOf(left), b = preferred.indexOf(right);
    if (a < 0) a = 99; if (b < 0) b = 99;
    return a - b || (left < right ? -1 : 1);
  });
  return { names: names, members: groups };
}

/** Human labels by criterion position (`rubricate report --labels`). */
export interface LabelLookup {
  /** [raters who said met, raters who said not met] of the criterion at this position, or null. */
  at(position: number): [number, number] | null;
  /** The raters' majority says the opposite of the judge's verdict (a tie is no majority). */
  disagrees(position: number): boolean;
}

export function labelLookup(run: RunData, overlay: LabelsOverlay): LabelLookup {
  const byPosition = new Map<number, [number, number]>();
  for (let offset = 0; offset + 2 < overlay.positions.length; offset += 3) byPosition.set(overlay.positions[offset], [overlay.positions[offset + 1], overlay.positions[offset + 2]]);
  return {
    at: function (position) { return byPosition.get(position) || null; },
    disagrees: function (position) {
      const counts = byPosition.get(position);
      const flags = run.criteria.flags[position];
      if (!counts || counts[0] === counts[1] || (flags & 3) !== 0) return false;
      const met = rubricateCriterionMet(flags);
      return met !== null && met !== counts[0] > counts[1];
    }
  };
}
