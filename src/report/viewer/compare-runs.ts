/**
 * Two or more runs side by side on the same items: each run against the first (the reference) as
 * a two-run report compares them (`compareRuns`: paired differences per tag, changed items,
 * flips), the overall paired difference of every pair of runs, and the item × run grid.
 */
import { defaultBootstrapSamples, defaultBootstrapSeed, deriveSeed } from '../../statistics/bootstrap.js';
import type { CollectedRun } from '../collect.js';
import { compareRuns, pairedDifference, type CompareOptions } from '../compare.js';
import type { PairedDifference, RunsComparePayload } from '../types.js';

export type ManyRunsComparison = Pick<RunsComparePayload, 'runs' | 'comparisons' | 'matrix' | 'grid'>;

/** The overall paired difference run − other over the items (matched by id) both scored. */
function overallDifference(run: CollectedRun, other: CollectedRun, samples: number, seed: number): PairedDifference | null {
  const scores: number[] = [];
  const otherScores: number[] = [];
  for (const [id, index] of run.indexById) {
    const otherIndex = other.indexById.get(id);
    if (otherIndex === undefined) continue;
    const score = run.data.items.scores[index];
    const otherScore = other.data.items.scores[otherIndex];
    if (score === null || otherScore === null) continue;
    scores.push(score);
    otherScores.push(otherScore);
  }
  return scores.length > 0 ? pairedDifference(scores, otherScores, samples, seed) : null;
}

/** The same difference seen from the other run: negated, its interval flipped. */
function reversed(difference: PairedDifference | null): PairedDifference | null {
  if (!difference) return null;
  return { n: difference.n, run: difference.baseline, baseline: difference.run, difference: -difference.difference, bootstrap_std: difference.bootstrap_std, ci95: [-difference.ci95[1], -difference.ci95[0]] };
}

export function compareManyRuns(runs: readonly CollectedRun[], options: CompareOptions = {}): ManyRunsComparison {
  const samples = options.bootstrapSamples ?? defaultBootstrapSamples;
  const seed = options.seed ?? defaultBootstrapSeed;
  const [reference, ...others] = runs;
  const comparisons = others.map((run) => compareRuns(run, reference, options));
  const matrix: Array<Array<PairedDifference | null>> = runs.map(() => runs.map(() => null));
  for (let row = 0; row < runs.length; row += 1) {
    for (let column = row + 1; column < runs.length; column += 1) {
      matrix[row][column] = overallDifference(runs[row], runs[column], samples, deriveSeed(seed, `runs:${row}:${column}`));
      matrix[column][row] = reversed(matrix[row][column]);
    }
  }
  // Rows: the reference's items in its order, then the ids only later runs have, in theirs.
  const ids: string[] = [];
  const seen = new Set<string>();
  for (const run of runs) {
    for (const id of run.indexById.keys()) {
      if (seen.has(id)) continue;
      seen.add(id);
      ids.push(id);
    }
  }
  const items = runs.map((run) => ids.map((id) => run.indexById.get(id) ?? -1));
  return { runs: runs.map((run) => run.data), comparisons, matrix, grid: { ids, items } };
}
