/**
 * Two runs of the same items side by side: items matched by id, the paired difference
 * run − baseline per tag with a seeded paired bootstrap (resampling matched items, so the
 * two runs' scores of an item stay together), the items that moved most, and the criterion
 * verdicts that flipped.
 */
import { bootstrap, defaultBootstrapSamples, defaultBootstrapSeed, deriveSeed } from '../statistics/bootstrap.js';
import { mean } from '../statistics/descriptive.js';
import type { CollectedRun } from './collect.js';
import type { ChangedItem, ComparisonSummary, CriterionFlip, PairedDifference } from './types.js';
import { dictionary } from '../util/dictionary.js';

export interface CompareOptions {
  bootstrapSamples?: number;
  seed?: number;
  /** Rows kept in the changed-items list. */
  changedLimit?: number;
  /** Rows kept in the flip table. */
  flipLimit?: number;
}

/**
 * Mean difference of paired scores with a percentile bootstrap over pairs. Resampling the
 * pair index draws both scores of an item together, which is what makes it paired.
 */
export function pairedDifference(run: readonly number[], baseline: readonly number[], samples = defaultBootstrapSamples, seed = defaultBootstrapSeed): PairedDifference {
  if (run.length !== baseline.length) throw new RangeError('paired scores need equal lengths');
  const differences = run.map((value, index) => value - baseline[index]);
  const spread = bootstrap(differences, mean, samples, seed);
  return {
    n: run.length,
    run: mean(run),
    baseline: mean(baseline),
    difference: mean(differences),
    bootstrap_std: spread.std,
    ci95: spread.ci95,
  };
}

function criterionMet(flags: number): boolean | null {
  const met = (flags >> 2) & 3;
  return met === 2 ? true : met === 1 ? false : null;
}

function criterionGraded(flags: number): boolean {
  return (flags & 3) === 0;
}

export function compareRuns(run: CollectedRun, baseline: CollectedRun, options: CompareOptions = {}): ComparisonSummary {
  const samples = options.bootstrapSamples ?? defaultBootstrapSamples;
  const seed = options.seed ?? defaultBootstrapSeed;
  const runItems = run.data.items;
  const baselineItems = baseline.data.items;

  const matchIndex: number[] = new Array(runItems.ids.length).fill(-1);
  let matched = 0;
  for (const [id, index] of run.indexById) {
    const other = baseline.indexById.get(id);
    if (other === undefined) continue;
    matchIndex[index] = other;
    matched += 1;
  }
  const onlyInRun = run.indexById.size - matched;
  const onlyInBaseline = baseline.indexById.size - matched;

  const overallRun: number[] = [];
  const overallBaseline: number[] = [];
  const tagPairs = new Map<string, { run: number[]; baseline: number[] }>();
  const changed: ChangedItem[] = [];
  for (let index = 0; index < matchIndex.length; index += 1) {
    const other = matchIndex[index];
    if (other < 0) continue;
    const runScore = runItems.scores[index];
    const baselineScore = baselineItems.scores[other];
    if (runScore === null || baselineScore === null) continue;
    overallRun.push(runScore);
    overallBaseline.push(baselineScore);
    changed.push({ id: runItems.ids[index], runIndex: index, baselineIndex: other, runScore, baselineScore, delta: runScore - baselineScore });
    const runTags = run.tagScores?.[index];
    const baselineTags = baseline.tagScores?.[other];
    if (!runTags || !baselineTags) continue;
    for (const [tag, value] of runTags) {
      const baselineValue = baselineTags.get(tag);
      if (baselineValue === undefined) continue;
      let pairs = tagPairs.get(tag);
      if (!pairs) tagPairs.set(tag, (pairs = { run: [], baseline: [] }));
      pairs.run.push(value);
      pairs.baseline.push(baselineValue);
    }
  }

  const byTag = dictionary<PairedDifference>();
  for (const [tag, pairs] of tagPairs) byTag[tag] = pairedDifference(pairs.run, pairs.baseline, samples, deriveSeed(seed, `tag:${tag}`));

  changed.sort((left, right) => Math.abs(right.delta) - Math.abs(left.delta) || (left.id < right.id ? -1 : left.id > right.id ? 1 : 0));
  const changedItems = changed.filter((item) => item.delta !== 0).slice(0, options.changedLimit ?? 50);

  return {
    runLabel: run.data.summary.label,
    baselineLabel: baseline.data.summary.label,
    matched,
    onlyInRun,
    onlyInBaseline,
    bootstrap: { samples, seed },
    overall: overallRun.length > 0 ? pairedDifference(overallRun, overallBaseline, samples, seed) : null,
    byTag,
    changedItems,
    flips: criterionFlips(run, baseline, matchIndex, options.flipLimit ?? 200),
    matchIndex,
  };
}

/**
 * Verdicts of the same criterion (same id within a matched item) graded in both runs, grouped
 * by criterion text; a flip is met in one run and not met in the other.
 */
function criterionFlips(run: CollectedRun, baseline: CollectedRun, matchIndex: readonly number[], limit: number): ComparisonSummary['flips'] {
  const runData = run.data;
  const baselineData = baseline.data;
  const rows = new Map<string, CriterionFlip>();
  let compared = 0;
  let metToNotMet = 0;
  let notMetToMet = 0;
  for (let index = 0; index < matchIndex.length; index += 1) {
    const other = matchIndex[index];
    if (other < 0) continue;
    const baselineById = new Map<string, number>();
    for (let position = baselineData.items.criteriaOffsets[other]; position < baselineData.items.criteriaOffsets[other + 1]; position += 1) {
      const id = baselineData.strings[baselineData.criteria.ids[position]];
      if (!baselineById.has(id)) baselineById.set(id, position);
    }
    for (let position = runData.items.criteriaOffsets[index]; position < runData.items.criteriaOffsets[index + 1]; position += 1) {
      const baselinePosition = baselineById.get(runData.strings[runData.criteria.ids[position]]);
      if (baselinePosition === undefined) continue;
      const runFlags = runData.criteria.flags[position];
      const baselineFlags = baselineData.criteria.flags[baselinePosition];
      if (!criterionGraded(runFlags) || !criterionGraded(baselineFlags)) continue;
      const runMet = criterionMet(runFlags);
      const baselineMet = criterionMet(baselineFlags);
      if (runMet === null || baselineMet === null) continue;
      const text = runData.strings[runData.criteria.texts[position]];
      let row = rows.get(text);
      if (!row) rows.set(text, (row = { text, points: runData.criteria.points[position], compared: 0, metToNotMet: 0, notMetToMet: 0 }));
      row.compared += 1;
      compared += 1;
      if (baselineMet && !runMet) {
        row.metToNotMet += 1;
        metToNotMet += 1;
      } else if (!baselineMet && runMet) {
        row.notMetToMet += 1;
        notMetToMet += 1;
      }
    }
  }
  const flipped = [...rows.values()].filter((row) => row.metToNotMet + row.notMetToMet > 0);
  flipped.sort(
    (left, right) =>
      right.metToNotMet + right.notMetToMet - (left.metToNotMet + left.notMetToMet) ||
      right.compared - left.compared ||
      (left.text < right.text ? -1 : left.text > right.text ? 1 : 0),
  );
  return { compared, metToNotMet, notMetToMet, criteria: flipped.slice(0, limit), omitted: Math.max(0, flipped.length - limit) };
}
