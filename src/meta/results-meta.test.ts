import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadLabels } from './labels.js';
import { joinResultsWithLabels, metaFromResults, validateGroupBy, valueAtPath } from './results-meta.js';
import { test } from '../testing/vitest-fixtures.js';

let directory: string;
let resultsFile: string;
let labelsFile: string;

function criterion(id: string, met: boolean | null, options: { tags?: string[]; source?: 'judge' | 'check'; status?: 'ok' | 'error' } = {}) {
  return { id, text: `criterion ${id}`, points: 1, tags: options.tags ?? [], kind: 'principle', source: options.source ?? 'judge', status: options.status ?? 'ok', met };
}

function result(id: string, criteria: unknown[], extra: Record<string, unknown> = {}) {
  return JSON.stringify({ id, status: 'ok', score: 0, criteria, rubricate_version: 'test', ...extra });
}

test.beforeAll(async ({ fileTempDir }) => {
  directory = fileTempDir;
  resultsFile = path.join(directory, 'results.jsonl');
  await writeFile(
    resultsFile,
    [
      result(
        'item1',
        [
          criterion('c1', true, { tags: ['axis:accuracy'] }),
          criterion('c2', false, { tags: ['axis:completeness'] }),
          criterion('c3', true, { source: 'check' }),
          criterion('c4', null, { status: 'error' }),
        ],
        { tags: ['theme:emergency'], metadata: { model: 'gpt' } },
      ),
      result('item2', [criterion('c1', false, { tags: ['axis:accuracy'] }), criterion('c2', true, { tags: ['axis:completeness'] }), criterion('c3', true)], {
        tags: ['theme:hedging'],
        metadata: { model: 'llama' },
      }),
      'garbage',
      result('item3', [criterion('c1', true, { tags: ['axis:accuracy'] })]),
      result('item1', [criterion('c1', false)], { metadata: { model: 'gpt' } }),
    ].join('\n'),
  );
  labelsFile = path.join(directory, 'labels.jsonl');
  await writeFile(
    labelsFile,
    [
      { id: 'item1', labels: { c1: [true, true], c2: false, c3: true, c4: true, c9: true } },
      { id: 'item2', criterion_id: 'c1', label: true },
      { id: 'item2', criterion_id: 'c2', label: true },
      { id: 'item3', criterion_id: 'c1', label: false },
      { id: 'nowhere', criterion_id: 'c1', label: true },
    ]
      .map((line) => JSON.stringify(line))
      .join('\n'),
  );
});

describe('joinResultsWithLabels', () => {
  it('joins on item and criterion id and accounts for every verdict and label', async () => {
    const { records, join, problems } = await joinResultsWithLabels(resultsFile, await loadLabels(labelsFile), { groupBy: ['criterion', 'axis'], sourceField: 'metadata.model' });
    expect(records.map((record) => [record.id, record.prediction, record.label])).toEqual([
      ['item1/c1', true, [true, true]],
      ['item1/c2', false, [false]],
      ['item2/c1', false, [true]],
      ['item2/c2', true, [true]],
      ['item3/c1', true, [false]],
    ]);
    expect(records[0].groups).toEqual({ criterion: 'c1', axis: ['accuracy'], source: 'gpt' });
    expect(records[4].groups).toEqual({ criterion: 'c1', axis: ['accuracy'] });
    expect(join).toMatchObject({
      resultLines: 5,
      invalidResultLines: 1,
      duplicateResultIds: 1,
      labelPairs: 9,
      labelRatings: 10,
      joined: 5,
      labelledWithoutVerdict: 1,
      labelledChecks: 1,
      labelsForMissingItems: 1,
      labelsForMissingCriteria: 1,
      verdictsWithoutLabel: 1,
      recordsWithoutSource: 1,
    });
    expect(join.unmatchedExamples).toEqual(['item1/c9', 'nowhere/c1']);
    expect(problems.map((error) => [error.details.line, error.details.field])).toEqual([
      [3, undefined],
      [5, 'id'],
    ]);
  });

  it('leaves cannot_assess raters out of the metrics and counts them, with reviewer fields ignored', async () => {
    const reviewed = path.join(directory, 'reviewed.jsonl');
    await writeFile(
      reviewed,
      [
        { id: 'item1', criterion_id: 'c1', label: 'cannot_assess', reviewer: 'ana', time: '2025-03-01T12:00:00Z', note: 'unclear' },
        { id: 'item1', criterion_id: 'c2', label: [false, 'cannot_assess'], reviewer: 'ana' },
        { id: 'nowhere', criterion_id: 'c5', label: 'cannot_assess' },
      ]
        .map((line) => JSON.stringify(line))
        .join('\n'),
    );
    const { records, join } = await joinResultsWithLabels(resultsFile, await loadLabels(reviewed));
    expect(records.map((record) => [record.id, record.prediction, record.label])).toEqual([['item1/c2', false, [false]]]);
    expect(join).toMatchObject({ joined: 1, labelPairs: 1, labelRatings: 1, cannotAssessRatings: 3, labelledOnlyCannotAssess: 1, labelsForMissingItems: 1 });
    expect(join.unmatchedExamples).toEqual(['nowhere/c5']);
  });

  it('leaves a verdict the judge could not assess out of the comparison, whatever its policy scored', async () => {
    const abstained = path.join(directory, 'abstained.jsonl');
    await writeFile(abstained, result('a1', [{ ...criterion('c1', false), cannot_assess: true }, criterion('c2', true)]));
    const labels = path.join(directory, 'abstained-labels.jsonl');
    await writeFile(labels, JSON.stringify({ id: 'a1', labels: { c1: false, c2: true } }));
    const { records, join } = await joinResultsWithLabels(abstained, await loadLabels(labels));
    expect(records.map((record) => record.id)).toEqual(['a1/c2']);
    expect(join).toMatchObject({ joined: 1, judgeCannotAssess: 1, labelledWithoutVerdict: 0 });
  });

  it('compares checks with the labels only when asked', async () => {
    const { records, join } = await joinResultsWithLabels(resultsFile, await loadLabels(labelsFile), { includeChecks: true });
    expect(records.map((record) => record.id)).toContain('item1/c3');
    expect(join.labelledChecks).toBe(0);
    expect(join.joined).toBe(6);
  });
});

describe('metaFromResults', () => {
  it('feeds the joined pairs to the binary metrics, with breakdowns and the bias index across sources', async () => {
    const report = await metaFromResults(resultsFile, labelsFile, { groupBy: ['criterion', 'axis', 'theme'], sourceField: 'metadata.model', resamples: 200 });
    // Pairs: item1/c1 TP ×2, item1/c2 TN, item2/c1 FN, item2/c2 TP, item3/c1 FP.
    expect(report.overall.confusion).toEqual({ truePositive: 3, falsePositive: 1, falseNegative: 1, trueNegative: 1 });
    expect(report.overall.records).toBe(5);
    expect(report.overall.accuracy).toBeCloseTo(4 / 6, 12);
    expect(report.overall.intervals.accuracy).not.toBeNull();
    expect(Object.keys(report.groups)).toEqual(['criterion', 'axis', 'theme', 'source']);
    expect(report.groups.criterion.c1.records).toBe(3);
    expect(report.groups.axis.completeness.confusion).toEqual({ truePositive: 1, falsePositive: 0, falseNegative: 0, trueNegative: 1 });
    expect(Object.keys(report.groups.theme)).toEqual(['emergency', 'hedging']);
    // gpt: errors 0 over 3 pairs; llama: (0 − 1) + (1 − 1) over 2 pairs = −0.5.
    expect(report.biasIndex?.bySource).toEqual({ gpt: { pairs: 3, meanError: 0 }, llama: { pairs: 2, meanError: -0.5 } });
    expect(report.biasIndex?.biasIndex).toBe(0.5);
    expect(report.agreement.recordsWithSeveralLabels).toBe(1);
    expect(report.inputs).toEqual({ results: resultsFile, labels: labelsFile, sourceField: 'metadata.model', groupBy: ['criterion', 'axis', 'theme'] });
    expect(report.problems.length).toBe(2);
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
  });

  it('without a source field there is no bias index, and without groups no breakdowns', async () => {
    const report = await metaFromResults(resultsFile, labelsFile, { resamples: 0 });
    expect(report.biasIndex).toBeNull();
    expect(report.groups).toEqual({});
    expect(report.overall.intervals.accuracy).toBeNull();
  });

  it('refuses to report on nothing, saying why', async () => {
    const stray = path.join(directory, 'stray.jsonl');
    await writeFile(stray, `${JSON.stringify({ id: 'elsewhere', criterion_id: 'c1', label: true })}\n`);
    await expect(metaFromResults(resultsFile, stray)).rejects.toMatchObject({ code: 'INPUT_INVALID', message: expect.stringMatching(/nothing to compare: .*1 labels name items not in the results/) });
  });
});

describe('helpers', () => {
  it('reads a source name at a dot path', () => {
    expect(valueAtPath({ metadata: { model: 'o3' } }, 'metadata.model')).toBe('o3');
    expect(valueAtPath({ metadata: { run: 4 } }, 'metadata.run')).toBe('4');
    expect(valueAtPath({ metadata: { model: '' } }, 'metadata.model')).toBeUndefined();
    expect(valueAtPath({ metadata: null }, 'metadata.model')).toBeUndefined();
    expect(valueAtPath({ metadata: { model: ['a'] } }, 'metadata.model')).toBeUndefined();
  });

  it('validates group names', () => {
    expect(validateGroupBy([' axis', 'criterion', '', 'axis'], undefined)).toEqual(['axis', 'criterion']);
    expect(() => validateGroupBy(['source'], 'metadata.model')).toThrow(/reserved/);
    expect(() => validateGroupBy(['axis:accuracy'], undefined)).toThrow(/without the colon/);
    expect(() => validateGroupBy([], ' ')).toThrow(/dot path/);
  });
});
