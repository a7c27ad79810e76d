/**
 * The recorded judges of `../shared/data/judge_evidence` through the CLI, beyond what
 * `test/judge-evidence-page.test.ts` checks of the figures: the flags each format refuses, and a
 * calibration that never learns from its test set.
 */
import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { dataPath, haveData } from '../src/testing/data.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { runCliInProcess } from './helpers.js';

const llmJudge = dataPath('judge_evidence/llmjudge_trec_dl23');
const llmRubric = dataPath('judge_evidence/llm_rubric_msft');
const haveLlmJudge = haveData(llmJudge, 'meta --format llmjudge (test/cli-judge-evidence.test.ts)');
const haveLlmRubric = haveData(llmRubric, 'meta --format llm-rubric (test/cli-judge-evidence.test.ts)');

describe.skipIf(!haveLlmJudge)('meta --format llmjudge', () => {
  test('refuses a judge beside recorded verdicts, and needs the labels', async ({ tempDir }) => {
    const input = path.join(llmJudge, 'submissions/willia-umbrela1.txt');
    const out = path.join(tempDir, 'report.json');
    const noLabels = await runCliInProcess(['meta', '--format', 'llmjudge', '--input', input, '--out', out]);
    expect(noLabels.code).not.toBe(0);
    expect(noLabels.stderr).toContain('--labels');
    const withJudge = await runCliInProcess(['meta', '--format', 'llmjudge', '--input', input, '--labels', path.join(llmJudge, 'llmjudge_test_qrel_idx.txt'), '--judge', 'scripted:met', '--out', out]);
    expect(withJudge.code).not.toBe(0);
    expect(withJudge.stderr).toContain('leave out --judge');
    const withGroups = await runCliInProcess(['meta', '--format', 'llmjudge', '--input', input, '--labels', path.join(llmJudge, 'llmjudge_test_qrel_idx.txt'), '--group-by', 'criterion', '--out', out]);
    expect(withGroups.code).toBe(2);
    expect(withGroups.stderr).toContain('--group-by applies to --format results');
  });
});

describe.skipIf(!haveLlmRubric)('calibrate --format llm-rubric', () => {
  test('fits on the synthetic set, beats the raw expected answer on the real set, and never reads the real answers to choose', async ({ tempDir }) => {
    const out = path.join(tempDir, 'calibration.json');
    const run = await runCliInProcess(['calibrate', '--format', 'llm-rubric', '--train', 'synthetic', '--test', 'real', '--input', llmRubric, '--out', out]);
    expect(run.code).toBe(0);
    const report = JSON.parse(await readFile(out, 'utf8'));
    expect(report.train).toMatchObject({ set: 'synthetic', rows: 662, dialogues: 223 });
    expect(report.test.rows).toBe(223);
    expect(report.test.unseenAnnotators).toEqual([]);
    expect(report.test.rawExpected.pearson.value.toFixed(6)).toBe('0.177301');
    expect(report.test.calibrated.pearson.value).toBeGreaterThan(report.test.rawExpected.pearson.value);
    expect(run.stderr).toContain('LLM-Rubric (README)');

    // The same synthetic files beside real human answers turned upside down: the same calibrator.
    const copy = path.join(tempDir, 'flipped');
    await mkdir(copy);
    for (const name of await readdir(llmRubric)) {
      if (name !== 'real_data__human_judges_real_convs_FIXED_ANON.tsv') await symlink(path.join(llmRubric, name), path.join(copy, name));
    }
    const humans = (await readFile(path.join(llmRubric, 'real_data__human_judges_real_convs_FIXED_ANON.tsv'), 'utf8')).split('\n');
    const q0 = humans[0].split('\t').indexOf('Q0');
    const flipped = humans.map((line, index) => (index === 0 || line === '' ? line : line.split('\t').map((cell, column) => (column === q0 ? String(5 - Number(cell)) : cell)).join('\t')));
    await writeFile(path.join(copy, 'real_data__human_judges_real_convs_FIXED_ANON.tsv'), flipped.join('\n'));
    const flippedOut = path.join(tempDir, 'flipped.json');
    expect((await runCliInProcess(['calibrate', '--format', 'llm-rubric', '--input', copy, '--out', flippedOut, '--quiet'])).code).toBe(0);
    const other = JSON.parse(await readFile(flippedOut, 'utf8'));
    expect(other.calibrator).toEqual(report.calibrator);
    expect(other.crossValidation).toEqual(report.crossValidation);
    expect(other.test.calibrated.pearson.value).toBeCloseTo(-report.test.calibrated.pearson.value, 12);
  });

  test('refuses the same set for training and testing', async ({ tempDir }) => {
    const run = await runCliInProcess(['calibrate', '--format', 'llm-rubric', '--train', 'real', '--test', 'real', '--input', llmRubric, '--out', path.join(tempDir, 'c.json')]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('must be different sets');
  });
});
