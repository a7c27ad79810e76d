import { existsSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { computePairwiseMeta } from '../../scoring/pairwise-metrics.js';
import { llmbarStatisticStrings, readLlmbarResults, readLlmbarStatistics } from './llmbar.js';
import { dataPath, haveData } from '../../testing/data.js';
import { test } from '../../testing/vitest-fixtures.js';

/** A tiny result.json in LLMBar's shape, written by hand. */
const fixtureRows = [
  // Vanilla-style: one results entry.
  { input: 'q1', output_1: 'a', output_2: 'b', label: 1, results: [{ 'swap = False': { completion: ['Output (a)', 'stop'], winner: '1' }, 'swap = True': { completion: ['Output (b)', 'stop'], winner: '1' } }] },
  // Metrics-style: auxiliary outputs first, the verdict last.
  { input: 'q2', output_1: 'a', output_2: 'b', label: 2, results: [['metric text', 'stop'], { 'swap = False': { winner: '1' }, 'swap = True': { winner: '2' } }] },
  // Swap-and-synthesize: the synthesis (last entry) is what counts, not the first pass.
  { input: 'q3', output_1: 'a', output_2: 'b', label: 2, results: [{ 'swap = False': { winner: '1' }, 'swap = True': { winner: '2' } }, { 'swap = False': { winner: '2' }, 'swap = True': { winner: '2' } }] },
  // The parser found no verdict in either order.
  { input: 'q4', output_1: 'a', output_2: 'b', label: 1, results: [{ 'swap = False': { winner: null }, 'swap = True': { winner: null } }] },
  // Malformed rows.
  { input: 'q5', output_1: 'a', output_2: 'b', label: 3, results: [{ 'swap = False': { winner: '1' }, 'swap = True': { winner: '1' } }] },
  { input: 'q6', output_1: 'a', output_2: 'b', label: 1, results: [] },
];

let directory: string;
let resultFile: string;
let statisticsFile: string;

test.beforeAll(async ({ fileTempDir }) => {
  directory = fileTempDir;
  const judgeFolder = path.join(directory, 'Dataset', 'LLMBar', 'Adversarial', 'Manual', 'evaluators', 'ToyJudge', 'Swap_CoT');
  await mkdir(judgeFolder, { recursive: true });
  resultFile = path.join(judgeFolder, 'result.json');
  statisticsFile = path.join(judgeFolder, 'statistics.json');
  await writeFile(resultFile, JSON.stringify(fixtureRows));
  // As Python's json module writes an undefined κ.
  await writeFile(
    statisticsFile,
    '{\n  "correct_False": "2 / 3 = 66.66666666666666%",\n  "correct_True": "1 / 3 = 33.33333333333333%",\n  "correct_average": "50.0%",\n  "correct_both": "1 / 3 = 33.33333333333333%",\n  "equal": "3 / 3 = 100.0%",\n  "kappa_False": 0.5,\n  "kappa_True": NaN,\n  "kappa_average": NaN,\n  "kappa_agreement": -0.25\n}',
  );
});

describe('readLlmbarResults (fixture)', () => {
  it('reads the last results entry of each row into normalised verdicts', async () => {
    const run = await readLlmbarResults(resultFile);
    expect(run.format).toBe('llmbar');
    expect(run.judge).toBe('ToyJudge');
    expect(run.strategy).toBe('Swap_CoT');
    expect(run.records).toEqual([
      { id: 'LLMBar/Adversarial/Manual/1', gold: 'A', original: 'A', swapped: 'A', source: 'LLMBar/Adversarial/Manual' },
      { id: 'LLMBar/Adversarial/Manual/2', gold: 'B', original: 'A', swapped: 'B', source: 'LLMBar/Adversarial/Manual' },
      { id: 'LLMBar/Adversarial/Manual/3', gold: 'B', original: 'B', swapped: 'B', source: 'LLMBar/Adversarial/Manual' },
      { id: 'LLMBar/Adversarial/Manual/4', gold: 'A', original: 'invalid', swapped: 'invalid', source: 'LLMBar/Adversarial/Manual' },
    ]);
  });

  it('reports malformed rows with file, record number and field', async () => {
    const run = await readLlmbarResults(resultFile);
    expect(run.invalid.map((error) => [error.code, error.details.line, error.details.field])).toEqual([
      ['INPUT_INVALID', 5, 'label'],
      ['INPUT_INVALID', 6, 'results'],
    ]);
    expect(run.invalid[0].details.file).toBe(resultFile);
  });

  it('fails clearly on a missing file', async () => {
    await expect(readLlmbarResults(path.join(directory, 'missing.json'))).rejects.toMatchObject({ code: 'INPUT_UNREADABLE' });
  });
});

describe('readLlmbarStatistics (fixture)', () => {
  it('parses counts, percentages and κ, with NaN read as null', async () => {
    const statistics = await readLlmbarStatistics(statisticsFile);
    expect(statistics.correctFalse).toEqual({ count: 2, total: 3, percent: 66.66666666666666 });
    expect(statistics.correctAverage).toBe(50);
    expect(statistics.equal).toEqual({ count: 3, total: 3, percent: 100 });
    expect(statistics.kappaFalse).toBe(0.5);
    expect(statistics.kappaTrue).toBeNull();
    expect(statistics.kappaAgreement).toBe(-0.25);
  });
});

describe('llmbarStatisticStrings', () => {
  it('formats counts exactly as LLMBar\u2019s Python code does', () => {
    const metrics = computePairwiseMeta(
      [
        { gold: 'A', original: 'A', swapped: 'A' },
        { gold: 'B', original: 'A', swapped: 'B' },
        { gold: 'B', original: 'B', swapped: 'A' },
      ],
      { resamples: 0 },
    ).overall;
    expect(llmbarStatisticStrings(metrics)).toEqual({
      correct_False: '2 / 3 = 66.66666666666666%',
      correct_True: '2 / 3 = 66.66666666666666%',
      correct_average: '66.66666666666666%',
      correct_both: '1 / 3 = 33.33333333333333%',
      equal: '1 / 3 = 33.33333333333333%',
    });
  });
});

// Real published judges: every statistics.json under an evaluators folder must be reproduced.
const llmbarRoot = dataPath('llmbar');
const statisticsFiles = haveData(llmbarRoot, 'LLMBar parity (src/meta/published/llmbar.test.ts)')
  ? readdirSync(llmbarRoot, { recursive: true, encoding: 'utf8' })
      .filter((entry) => path.basename(entry) === 'statistics.json' && entry.split(path.sep).includes('evaluators'))
      .map((entry) => path.join(llmbarRoot, entry))
      .filter((file) => existsSync(path.join(path.dirname(file), 'result.json')))
      .sort()
  : [];
if (statisticsFiles.length === 0) console.warn(`LLMBar parity tests skipped: no evaluators/**/statistics.json under ${llmbarRoot}`);

describe.skipIf(statisticsFiles.length === 0)('LLMBar parity with published statistics.json', () => {
  it.each(statisticsFiles.map((file) => [path.relative(llmbarRoot, file), file]))('%s', async (_name, file) => {
    const published = await readLlmbarStatistics(file);
    const run = await readLlmbarResults(path.join(path.dirname(file), 'result.json'));
    expect(run.invalid).toEqual([]);
    const metrics = computePairwiseMeta(run.records, { resamples: 0, llmbarKappa: true }).overall;

    expect(metrics.pairs).toBe(published.correctFalse.total);
    expect(metrics.counts.correctOriginal).toBe(published.correctFalse.count);
    expect(metrics.counts.correctSwapped).toBe(published.correctTrue.count);
    expect(metrics.counts.equal).toBe(published.equal.count);
    if (published.correctBoth) expect(metrics.counts.correctBoth).toBe(published.correctBoth.count);
    // Same IEEE operations as LLMBar, so the percentages are equal bit for bit.
    expect(metrics.accuracy.original! * 100).toBe(published.correctFalse.percent);
    expect(metrics.accuracy.swapped! * 100).toBe(published.correctTrue.percent);
    expect(metrics.accuracy.average! * 100).toBe(published.correctAverage);
    expect(metrics.positionalAgreement! * 100).toBe(published.equal.percent);
    // And the strings the file holds are reproduced character for character.
    const strings = llmbarStatisticStrings(metrics);
    for (const [key, text] of Object.entries(strings)) if (key in published.raw) expect(text).toBe(published.raw[key]);

    const kappa = metrics.llmbarKappa!;
    const pairsToCheck: Array<[number | null, number | null | undefined]> = [
      [kappa.original, published.kappaFalse],
      [kappa.swapped, published.kappaTrue],
      [kappa.average, published.kappaAverage],
      [kappa.agreement, published.kappaAgreement],
    ];
    for (const [ours, theirs] of pairsToCheck) {
      if (theirs === undefined) continue;
      if (theirs === null) expect(ours).toBeNull();
      else expect(Math.abs(ours! - theirs)).toBeLessThanOrEqual(1e-12);
    }
  });
});
