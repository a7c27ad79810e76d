import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hhhImporter, hhhPlacementSeed, parsePrometheusPrompt, rubricFromPrometheusText } from './hhh.js';
import type { PairwiseImportRecord } from '../rubric/records.js';
import { dataPath, haveData } from '../testing/data.js';
import { test } from '../testing/vitest-fixtures.js';

async function collect(source: string): Promise<PairwiseImportRecord[]> {
  const records: PairwiseImportRecord[] = [];
  for await (const record of hhhImporter.read(source, {})) records.push(record);
  return records;
}

const rubricText = [
  '[Is the response helpful?]',
  'Score 1: Not at all.',
  'Score 2: Barely.',
  'Score 3: Somewhat.',
  'Score 4: Mostly.',
  'Score 5: Fully.',
].join('\n');

/** A grading prompt in Prometheus' absolute-grading layout. */
function gradingPrompt(instruction: string, response: string, rubric = rubricText): string {
  return `###Task Description:\nAn instruction, a response and a rubric are given.\n\n###The instruction to evaluate:\n${instruction}\n\n###Response to evaluate:\n${response}\n\n###Score Rubrics:\n${rubric}\n\n###Feedback: `;
}

let directory: string;
let file: string;

test.beforeAll(async ({ fileTempDir }) => {
  directory = fileTempDir;
  file = path.join(directory, 'hhh.json');
  const rows = Array.from({ length: 12 }, (_, index) => ({
    source: index % 2 === 0 ? 'helpful' : 'harmless',
    chosen_instruction: gradingPrompt(`Question ${index}?`, `Good answer ${index}.\n\nWith a second paragraph.`),
    rejected_instruction: gradingPrompt(`Question ${index}?`, `Bad answer ${index}.`),
  }));
  rows.push({ source: 'honest', chosen_instruction: gradingPrompt('Q?', 'A.'), rejected_instruction: gradingPrompt('Another Q?', 'B.') });
  rows.push({ source: 'honest', chosen_instruction: 'no headings here', rejected_instruction: gradingPrompt('Q?', 'B.') });
  await writeFile(file, JSON.stringify(rows));
});

describe('parsePrometheusPrompt and rubricFromPrometheusText', () => {
  it('extracts the instruction, the response (inner blank lines kept) and the rubric', () => {
    expect(parsePrometheusPrompt(gradingPrompt('Why?', 'Because.\n\nReally.'))).toEqual({
      instruction: 'Why?',
      response: 'Because.\n\nReally.',
      rubricText,
    });
    expect(parsePrometheusPrompt('###Response to evaluate:\nx')).toBeNull();
  });

  it('builds a one-criterion ordinal rubric with the five score descriptions', () => {
    const rubric = rubricFromPrometheusText(rubricText, 'hhh-helpful');
    expect(rubric.id).toBe('hhh-helpful');
    expect(rubric.criteria).toHaveLength(1);
    expect(rubric.criteria[0].text).toBe('Is the response helpful?');
    expect(rubric.criteria[0].scale).toEqual({
      type: 'ordinal',
      choices: [
        { label: '1', description: 'Not at all.' },
        { label: '2', description: 'Barely.' },
        { label: '3', description: 'Somewhat.' },
        { label: '4', description: 'Mostly.' },
        { label: '5', description: 'Fully.' },
      ],
    });
    expect(rubric.metadata?.rubricText).toBe(rubricText);
  });

  it('falls back to a plain criterion when the rubric text has no score levels', () => {
    const rubric = rubricFromPrometheusText('Be kind.', 'r');
    expect(rubric.criteria[0]).toMatchObject({ text: 'Be kind.' });
    expect(rubric.criteria[0].scale).toBeUndefined();
  });
});

describe('hhhImporter (fixture)', () => {
  it('places the chosen response as A or B by the seeded rule and labels it the winner', async () => {
    const records = await collect(file);
    const pairs = records.flatMap((record) => (record.kind === 'pair' ? [record.pair] : []));
    expect(pairs).toHaveLength(12);
    for (const pair of pairs) {
      const chosenPosition = pair.metadata?.chosenPosition;
      expect(pair.label).toBe(chosenPosition);
      const winner = chosenPosition === 'A' ? pair.responseA : pair.responseB;
      const loser = chosenPosition === 'A' ? pair.responseB : pair.responseA;
      expect(winner).toMatch(/^Good answer \d+\.\n\nWith a second paragraph\.$/);
      expect(loser).toMatch(/^Bad answer \d+\.$/);
      expect(pair.metadata?.placementSeed).toBe(hhhPlacementSeed);
      expect(pair.rubric?.criteria[0].text).toBe('Is the response helpful?');
    }
    // Not always A, not always B.
    expect(new Set(pairs.map((pair) => pair.label))).toEqual(new Set(['A', 'B']));
    expect(pairs[0]).toMatchObject({ id: 'hhh/helpful/1', source: 'helpful', prompt: [{ role: 'user', content: 'Question 0?' }] });
  });

  it('gives the same placement on every read', async () => {
    const first = (await collect(file)).map((record) => record.kind === 'pair' && record.pair.label);
    const second = (await collect(file)).map((record) => record.kind === 'pair' && record.pair.label);
    expect(second).toEqual(first);
  });

  it('rejects rows whose prompts disagree or lack the Prometheus headings', async () => {
    const records = await collect(file);
    const invalid = records.flatMap((record) => (record.kind === 'invalid' ? [record] : []));
    expect(invalid.map((record) => [record.line, record.error.details.field])).toEqual([
      [13, 'rejected_instruction'],
      [14, 'chosen_instruction'],
    ]);
    expect(invalid[0].error.message).toMatch(/different instructions/);
  });
});

const realFile = dataPath('prometheus_eval_benchmarks/hhh_alignment_eval.json');
if (!existsSync(realFile)) console.warn(`HHH real-data import test skipped: ${realFile} is absent`);

describe.skipIf(!haveData(realFile, 'src/formats/hhh.test.ts'))('hhhImporter (real file)', () => {
  it('reads all 221 pairs with five-level rubrics and a balanced placement', async () => {
    const records = await collect(realFile);
    expect(records).toHaveLength(221);
    const pairs = records.flatMap((record) => (record.kind === 'pair' ? [record.pair] : []));
    expect(pairs).toHaveLength(221);
    expect(new Set(pairs.map((pair) => pair.source))).toEqual(new Set(['harmless', 'helpful', 'honest', 'other']));
    expect(pairs.every((pair) => pair.rubric?.criteria[0].scale?.type === 'ordinal')).toBe(true);
    expect(pairs.every((pair) => pair.responseA !== pair.responseB && pair.prompt[0].content.length > 0)).toBe(true);
    const chosenAsA = pairs.filter((pair) => pair.label === 'A').length;
    expect(chosenAsA).toBeGreaterThan(85);
    expect(chosenAsA).toBeLessThan(136);
  });
});
