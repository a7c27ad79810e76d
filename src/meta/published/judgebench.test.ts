import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { safeParseJson } from '../../util/json.js';
import { computePairwiseMeta } from '../../scoring/pairwise-metrics.js';
import { judgeBenchCategory, readJudgeBenchOutputs } from './judgebench.js';
import { dataPath, haveData } from '../../testing/data.js';
import { test } from '../../testing/vitest-fixtures.js';

const game = (decision: string | null) => ({ judgment: { judge_model: 'toy-model', prompt: 'p', response: 'r' }, decision });

const fixtureRows = [
  { pair_id: 'p1', source: 'mmlu-pro-law', label: 'A>B', judge_name: 'toy', judgments: [game('A>B'), game('B>A')] }, // both games right
  { pair_id: 'p2', source: 'livebench-math', label: 'B>A', judgments: [game('A>B'), game('A>B')] }, // position bias: cancels
  { pair_id: 'p3', source: 'livecodebench', label: 'A>B', judgments: [game('A=B'), null] }, // tie, failed call
  { pair_id: 'p4', source: 'livebench-reasoning', label: 'B>A', judgments: [game(null), game('A>B')] }, // unparsed, then right
  { pair_id: 'p5', source: 'mmlu-pro-law', label: 'A>C', judgments: [game('A>B'), game('B>A')] }, // bad label
];

let directory: string;
let file: string;

test.beforeAll(async ({ fileTempDir }) => {
  directory = fileTempDir;
  file = path.join(directory, 'outputs.jsonl');
  await writeFile(file, `${fixtureRows.map((row) => JSON.stringify(row)).join('\n')}\nnot json\n`);
});

describe('readJudgeBenchOutputs (fixture)', () => {
  it('maps the second game back to the original order', async () => {
    const run = await readJudgeBenchOutputs(file);
    expect(run.judge).toBe('toy:toy-model');
    expect(run.records.map(({ id, gold, original, swapped, category }) => ({ id, gold, original, swapped, category }))).toEqual([
      { id: 'p1', gold: 'A', original: 'A', swapped: 'A', category: 'mmlu-pro' },
      { id: 'p2', gold: 'B', original: 'A', swapped: 'B', category: 'livebench-math' },
      { id: 'p3', gold: 'A', original: 'tie', swapped: 'invalid', category: 'livecodebench' },
      { id: 'p4', gold: 'B', original: 'invalid', swapped: 'B', category: 'livebench-reasoning' },
    ]);
  });

  it('reports unreadable rows with their line and field', async () => {
    const run = await readJudgeBenchOutputs(file);
    expect(run.invalid.map((error) => [error.details.line, error.details.field])).toEqual([
      [5, 'label'],
      [6, ''],
    ]);
  });

  it('scores the fixture as JudgeBench would', async () => {
    const run = await readJudgeBenchOutputs(file);
    const report = computePairwiseMeta(run.records, { resamples: 0 });
    // p1 +2 → correct; p2 −1 +1 → tie; p3 0 → tie; p4 0 +1 → correct.
    expect(report.overall.judgeBench).toMatchObject({ correct: 2, incorrect: 0, tie: 2, percent: 50, nulls: 2 });
    expect(report.byCategory['mmlu-pro'].judgeBench.percent).toBe(100);
  });

  it('groups sources by JudgeBench\u2019s reporting prefixes', () => {
    expect(judgeBenchCategory('mmlu-pro-computer science')).toBe('mmlu-pro');
    expect(judgeBenchCategory('livebench-reasoning')).toBe('livebench-reasoning');
    expect(judgeBenchCategory('something-else')).toBe('something-else');
  });
});

/**
 * JudgeBench's scoring re-derived from the raw rows, independently of the reader: flip the
 * second decision, vote +1 for the label and −1 for its opposite, count positive net votes;
 * a category is every pair whose source starts with its prefix ('' = overall).
 */
function referenceScore(rows: ReadonlyArray<Record<string, any>>, prefix: string): number {
  const flip = (decision: unknown) => (decision === 'A>B' ? 'B>A' : decision === 'B>A' ? 'A>B' : decision);
  const included = rows.filter((row) => String(row.source).startsWith(prefix));
  let correct = 0;
  for (const row of included) {
    // Files written with --single_game hold one judgment: correct when it equals the label.
    if (row.judgments.length === 1) {
      if (row.judgments[0]?.decision === row.label) correct += 1;
      continue;
    }
    const [first, second] = row.judgments;
    const decisions = [first === null ? null : first.decision, flip(second === null ? null : second.decision)];
    let vote = 0;
    for (const decision of decisions) {
      if (decision === row.label) vote += 1;
      else if (decision === flip(row.label)) vote -= 1;
    }
    if (vote > 0) correct += 1;
  }
  return (100 * correct) / included.length;
}

const outputsFolder = dataPath('judgebench/outputs');
const outputFiles = haveData(outputsFolder, 'JudgeBench parity (src/meta/published/judgebench.test.ts)')
  ? readdirSync(outputsFolder)
      .filter((name) => name.endsWith('.jsonl'))
      .sort()
      .map((name) => path.join(outputsFolder, name))
  : [];
if (outputFiles.length === 0) console.warn(`JudgeBench parity tests skipped: no outputs/*.jsonl under ${outputsFolder}`);

describe.skipIf(outputFiles.length === 0)('JudgeBench parity with its own scoring', () => {
  it.each(outputFiles.map((file) => [path.basename(file), file]))('%s', async (_name, outputFile) => {
    const rows = readFileSync(outputFile, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const parsed = safeParseJson(line);
        if (!parsed.ok) throw new Error(`unreadable line in ${outputFile}: ${parsed.error}`);
        return parsed.value as Record<string, any>;
      });
    const run = await readJudgeBenchOutputs(outputFile);
    expect(run.invalid).toEqual([]);
    expect(run.records).toHaveLength(rows.length);
    const report = computePairwiseMeta(run.records, { resamples: 0 });

    const printed: Record<string, number> = {};
    for (const prefix of ['mmlu-pro', 'livebench-reasoning', 'livebench-math', 'livecodebench']) {
      if (!rows.some((row) => String(row.source).startsWith(prefix))) continue;
      printed[prefix] = referenceScore(rows, prefix);
      expect(report.byCategory[prefix].judgeBench.percent).toBe(printed[prefix]);
    }
    printed.Overall = referenceScore(rows, '');
    expect(report.overall.judgeBench.percent).toBe(printed.Overall);
    console.info(`JudgeBench score ${path.basename(outputFile)}: ${JSON.stringify(printed)}`);
  });
});
