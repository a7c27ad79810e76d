import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { computeBinaryMeta, computePairwiseMeta, formatMetaTable, scorePublishedJudge, type PublishedFormat } from './index.js';
import { test } from '../testing/vitest-fixtures.js';

let directory: string;
let llmbarFile: string;
let judgeBenchFile: string;

test.beforeAll(async ({ fileTempDir }) => {
  directory = fileTempDir;
  const judgeFolder = path.join(directory, 'LLMBar', 'Natural', 'evaluators', 'ToyJudge', 'Vanilla');
  await mkdir(judgeFolder, { recursive: true });
  llmbarFile = path.join(judgeFolder, 'result.json');
  const verdict = (original: string | null, swapped: string | null) => [{ 'swap = False': { winner: original }, 'swap = True': { winner: swapped } }];
  await writeFile(
    llmbarFile,
    JSON.stringify([
      { input: 'q1', output_1: 'x', output_2: 'y', label: 1, results: verdict('1', '1') },
      { input: 'q2', output_1: 'x', output_2: 'y', label: 2, results: verdict('1', '2') },
      { input: 'q3', output_1: 'x', output_2: 'y', label: 2, results: verdict('2', '2') },
      { input: 'q4', output_1: 'x', output_2: 'y', label: 1, results: 'broken' },
    ]),
  );
  judgeBenchFile = path.join(directory, 'judgebench.jsonl');
  const game = (decision: string | null) => ({ judgment: { judge_model: 'toy-model' }, decision });
  await writeFile(
    judgeBenchFile,
    [
      { pair_id: 'a', source: 'mmlu-pro-math', label: 'A>B', judge_name: 'toy', judgments: [game('A>B'), game('B>A')] },
      { pair_id: 'b', source: 'livecodebench', label: 'B>A', judgments: [game('B>A'), game('A>B')] },
      { pair_id: 'c', source: 'livecodebench', label: 'A>B', judgments: [game('B>A'), game('A>B')] },
    ]
      .map((row) => JSON.stringify(row))
      .join('\n'),
  );
});

describe('scorePublishedJudge', () => {
  it('re-scores an LLMBar judge with LLMBar\u2019s fields and a stable key order', async () => {
    const report = await scorePublishedJudge('llmbar', llmbarFile, { resamples: 100 });
    expect(Object.keys(report)).toEqual(['kind', 'published', 'overall', 'bySource', 'byCategory', 'bootstrap']);
    expect(report.published).toMatchObject({ format: 'llmbar', judge: 'ToyJudge', strategy: 'Vanilla', records: 3, invalidRows: 1 });
    expect(report.published.invalid[0]).toMatchObject({ code: 'INPUT_INVALID', details: { line: 4, field: 'results' } });
    expect(report.overall.counts).toEqual({ correctOriginal: 2, correctSwapped: 3, correctBoth: 2, equal: 2 });
    expect(report.overall.llmbarKappa).toBeDefined();
    expect(Object.keys(report.bySource)).toEqual(['LLMBar/Natural']);
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
  });

  it('re-scores a JudgeBench judge per category', async () => {
    const report = await scorePublishedJudge('judgebench', judgeBenchFile, { resamples: 100 });
    expect(report.published).toMatchObject({ format: 'judgebench', judge: 'toy:toy-model', records: 3, invalidRows: 0 });
    // a: +2 correct; b: +2 correct; c: −2 incorrect.
    expect(report.overall.judgeBench).toMatchObject({ correct: 2, incorrect: 1, tie: 0 });
    expect(report.byCategory.livecodebench.judgeBench.percent).toBe(50);
    expect(report.byCategory['mmlu-pro'].judgeBench.percent).toBe(100);
    expect(report.overall.llmbarKappa).toBeUndefined();
  });

  it('rejects an unknown format and a missing file', async () => {
    await expect(scorePublishedJudge('arena' as PublishedFormat, llmbarFile)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    await expect(scorePublishedJudge('judgebench', path.join(directory, 'nope.jsonl'))).rejects.toMatchObject({ code: 'INPUT_UNREADABLE' });
  });
});

describe('formatMetaTable', () => {
  it('renders a pairwise report with its header, metrics, intervals and breakdowns', async () => {
    const text = formatMetaTable(await scorePublishedJudge('llmbar', llmbarFile, { resamples: 100 }));
    expect(text).toContain('llmbar judge ToyJudge/Vanilla');
    expect(text).toContain('3 pairs, 3 judged in both orders, 1 unreadable rows skipped');
    expect(text).toMatch(/accuracy \(original order\)\s+0\.6667\s+\[/);
    expect(text).toMatch(/accuracy \(average\)\s+0\.8333/);
    expect(text).toMatch(/positional agreement\s+0\.6667/);
    expect(text).toContain('LLMBar kappa (agreement)');
    expect(text).toMatch(/LLMBar\/Natural\s+3\s+0\.6667\s+1\.0000/);
  });

  it('renders a pairwise report without swapped verdicts using dashes', () => {
    const text = formatMetaTable(computePairwiseMeta([{ gold: 'A', original: 'A', category: 'c' }], { resamples: 0 }));
    expect(text).toContain('pairwise judge agreement: 1 pairs, 0 judged in both orders');
    expect(text).toMatch(/accuracy \(swapped order\)\s+—/);
    expect(text).toContain('By category:');
  });

  it('renders a binary report with bias index and group breakdowns', () => {
    const report = computeBinaryMeta(
      [
        { prediction: true, label: true, groups: { source: 'o3', criterion: 'c1' } },
        { prediction: true, label: false, groups: { source: 'o3', criterion: 'c1' } },
        { prediction: false, label: [false, false], groups: { source: 'r1', criterion: 'c2' } },
      ],
      { resamples: 100 },
    );
    const text = formatMetaTable(report);
    expect(text).toContain('Binary judge agreement: 3 records, 4 (prediction, label) pairs');
    expect(text).toMatch(/accuracy\s+0\.7500/);
    expect(text).toMatch(/bias index \(ProfBench\)\s+0\.5000/);
    expect(text).toContain("Fleiss' kappa (human labels)");
    expect(text).toMatch(/o3\s+2\s+0\.5000/);
    expect(text).toContain('By criterion:');
    expect(text.endsWith('\n')).toBe(true);
  });
});
