import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toScoredItem, type ResultRecord } from '../results/results.js';
import { bootstrap } from '../statistics/bootstrap.js';
import { mean } from '../statistics/descriptive.js';
import { getScoring } from '../scoring/registry.js';
import { seededRandom } from '../util/random.js';
import { collectRun, itemTagScores } from './collect.js';
import { compareRuns, pairedDifference } from './compare.js';
import { syntheticResultRecords } from './synthetic.js';
import { test } from '../testing/vitest-fixtures.js';

let directory: string;
test.beforeAll(({ fileTempDir }) => {
  directory = fileTempDir;
});

function writeResults(name: string, records: ResultRecord[]): string {
  const file = join(directory, name);
  writeFileSync(file, records.map((record) => JSON.stringify(record)).join('\n') + '\n');
  return file;
}

describe('pairedDifference', () => {
  const random = seededRandom(5);
  const baseline = Array.from({ length: 200 }, () => random());
  // The run tracks the baseline closely (same items), a little higher.
  const run = baseline.map((value) => value + 0.03 + (random() - 0.5) * 0.05);

  it('is the mean difference, with a seeded interval around it', () => {
    const result = pairedDifference(run, baseline, 500, 42);
    expect(result.n).toBe(200);
    expect(result.difference).toBeCloseTo(mean(run) - mean(baseline), 12);
    expect(result.run).toBeCloseTo(mean(run), 12);
    expect(result.ci95[0]).toBeLessThan(result.difference);
    expect(result.ci95[1]).toBeGreaterThan(result.difference);
    expect(pairedDifference(run, baseline, 500, 42)).toEqual(result);
    expect(pairedDifference(run, baseline, 500, 43).ci95).not.toEqual(result.ci95);
  });

  it('is much tighter than treating the runs as independent samples when items are correlated', () => {
    const paired = pairedDifference(run, baseline, 1000, 1);
    const independent = Math.hypot(bootstrap(run, mean, 1000, 2).std, bootstrap(baseline, mean, 1000, 3).std);
    expect(paired.bootstrap_std).toBeLessThan(independent / 5);
    expect(paired.ci95[0]).toBeGreaterThan(0);
  });

  it('rejects unpaired inputs', () => {
    expect(() => pairedDifference([1, 2], [1])).toThrow(RangeError);
  });
});

describe('compareRuns', () => {
  const runRecords = [...syntheticResultRecords({ items: 80, criteriaPerItem: 6, seed: 21, errorRate: 0.05 })];
  // The baseline: a different draw of verdicts, in another order, missing some items and with one extra.
  const baselineRecords = [...syntheticResultRecords({ items: 80, criteriaPerItem: 6, seed: 21, errorRate: 0.05, qualityShift: -0.15 })]
    .filter((_, index) => index % 9 !== 4)
    .reverse();
  baselineRecords.push({ ...baselineRecords[0], id: 'only-in-baseline' });

  it('matches items by id and pairs their scores per tag', async () => {
    const run = await collectRun(writeResults('run.jsonl', runRecords), { keepTagScores: true });
    const baseline = await collectRun(writeResults('baseline.jsonl', baselineRecords), { keepTagScores: true });
    const comparison = compareRuns(run, baseline, { bootstrapSamples: 200, seed: 9 });
    const baselineById = new Map(baselineRecords.map((record) => [record.id, record]));
    const matchedIds = runRecords.filter((record) => baselineById.has(record.id)).map((record) => record.id);

    expect(comparison.matched).toBe(matchedIds.length);
    expect(comparison.onlyInRun).toBe(runRecords.length - matchedIds.length);
    expect(comparison.onlyInBaseline).toBe(1);
    comparison.matchIndex.forEach((other, index) => {
      if (other >= 0) expect(baseline.data.items.ids[other]).toBe(run.data.items.ids[index]);
      else expect(baselineById.has(run.data.items.ids[index])).toBe(false);
    });

    const scoring = getScoring('healthbench');
    const differences: number[] = [];
    const tagDifferences = new Map<string, number[]>();
    for (const record of runRecords) {
      const other = baselineById.get(record.id);
      if (!other) continue;
      const runScore = scoring.itemScore(toScoredItem(record));
      const baselineScore = scoring.itemScore(toScoredItem(other));
      if (runScore === null || baselineScore === null) continue;
      differences.push(runScore - baselineScore);
      const runTags = itemTagScores(scoring, toScoredItem(record))!;
      const baselineTags = itemTagScores(scoring, toScoredItem(other))!;
      for (const [tag, value] of runTags) {
        if (!baselineTags.has(tag)) continue;
        tagDifferences.set(tag, [...(tagDifferences.get(tag) ?? []), value - baselineTags.get(tag)!]);
      }
    }
    expect(comparison.overall?.n).toBe(differences.length);
    expect(comparison.overall?.difference).toBeCloseTo(mean(differences), 12);
    expect(comparison.overall!.difference).toBeGreaterThan(0);
    expect(Object.keys(comparison.byTag).sort()).toEqual([...tagDifferences.keys()].sort());
    for (const [tag, values] of tagDifferences) {
      expect(comparison.byTag[tag].n).toBe(values.length);
      expect(comparison.byTag[tag].difference).toBeCloseTo(mean(values), 12);
    }

    const deltas = comparison.changedItems.map((item) => Math.abs(item.delta));
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas).toEqual([...deltas].sort((left, right) => right - left));
    expect(Math.max(...differences.map(Math.abs))).toBeCloseTo(deltas[0], 12);
    const first = comparison.changedItems[0];
    expect(run.data.items.ids[first.runIndex]).toBe(first.id);
    expect(baseline.data.items.ids[first.baselineIndex]).toBe(first.id);
  });

  it('counts verdict flips of the same criterion in both directions', async () => {
    const run = await collectRun(writeResults('run-flips.jsonl', runRecords));
    const baseline = await collectRun(writeResults('baseline-flips.jsonl', baselineRecords));
    const comparison = compareRuns(run, baseline, { bootstrapSamples: 50 });
    const baselineById = new Map(baselineRecords.map((record) => [record.id, record]));
    let compared = 0;
    let metToNotMet = 0;
    let notMetToMet = 0;
    const perText = new Map<string, number>();
    for (const record of runRecords) {
      const other = baselineById.get(record.id);
      if (!other) continue;
      for (const criterion of record.criteria) {
        const before = other.criteria.find((each) => each.id === criterion.id);
        if (!before || before.status !== 'ok' || criterion.status !== 'ok' || before.met === null || criterion.met === null) continue;
        compared += 1;
        if (before.met && !criterion.met) metToNotMet += 1;
        if (!before.met && criterion.met) notMetToMet += 1;
        if (before.met !== criterion.met) perText.set(criterion.text ?? criterion.id, (perText.get(criterion.text ?? criterion.id) ?? 0) + 1);
      }
    }
    expect(comparison.flips).toMatchObject({ compared, metToNotMet, notMetToMet, omitted: 0 });
    expect(metToNotMet + notMetToMet).toBeGreaterThan(10);
    expect(comparison.flips.criteria).toHaveLength(perText.size);
    for (const row of comparison.flips.criteria) expect(row.metToNotMet + row.notMetToMet).toBe(perText.get(row.text));
    const totals = comparison.flips.criteria.map((row) => row.metToNotMet + row.notMetToMet);
    expect(totals).toEqual([...totals].sort((left, right) => right - left));

    const limited = compareRuns(run, baseline, { bootstrapSamples: 50, flipLimit: 3 });
    expect(limited.flips.criteria).toHaveLength(3);
    expect(limited.flips.omitted).toBe(perText.size - 3);
  });
});
