/**
 * The recorded judges of `../shared/data/judge_evidence` through the CLI: `meta --format
 * llmjudge` and `meta --format llm-rubric` write their fixed-key reports and print the figures.
 */
import { readFile } from 'node:fs/promises';
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
  test('writes the report with its fixed keys and prints α and κ', async ({ tempDir }) => {
    const out = path.join(tempDir, 'report.json');
    const run = await runCliInProcess(['meta', '--format', 'llmjudge', '--input', path.join(llmJudge, 'submissions/willia-umbrela1.txt'), '--labels', path.join(llmJudge, 'llmjudge_test_qrel_idx.txt'), '--out', out]);
    expect(run.code).toBe(0);
    const report = JSON.parse(await readFile(out, 'utf8'));
    expect(Object.keys(report)).toEqual(['format', 'inputs', 'run', 'pairs', 'fourPoint', 'binarised']);
    expect(Object.keys(report.binarised)).toEqual(['atLeast1', 'atLeast2', 'atLeast3']);
    expect(report.fourPoint.krippendorffAlpha.toFixed(6)).toBe('0.491793');
    expect(run.stderr).toContain('0.4918');
  });

  test('refuses a judge beside recorded verdicts, and needs the labels', async ({ tempDir }) => {
    const input = path.join(llmJudge, 'submissions/willia-umbrela1.txt');
    const out = path.join(tempDir, 'report.json');
    const noLabels = await runCliInProcess(['meta', '--format', 'llmjudge', '--input', input, '--out', out]);
    expect(noLabels.code).not.toBe(0);
    expect(noLabels.stderr).toContain('--labels');
    const withJudge = await runCliInProcess(['meta', '--format', 'llmjudge', '--input', input, '--labels', path.join(llmJudge, 'llmjudge_test_qrel_idx.txt'), '--judge', 'scripted:met', '--out', out]);
    expect(withJudge.code).not.toBe(0);
    expect(withJudge.stderr).toContain('leave out --judge');
  });
});

describe.skipIf(!haveLlmRubric)('meta --format llm-rubric', () => {
  test('writes the baseline table of every question and prints the README rows', async ({ tempDir }) => {
    const out = path.join(tempDir, 'report.json');
    const run = await runCliInProcess(['meta', '--format', 'llm-rubric', '--input', llmRubric, '--out', out]);
    expect(run.code).toBe(0);
    const report = JSON.parse(await readFile(out, 'utf8'));
    expect(Object.keys(report.baselines)).toEqual(['Q0', 'Q1', 'Q2', 'Q3', 'Q4', 'Q5', 'Q6', 'Q7', 'Q8']);
    expect(report.baselines.Q0.expected.rmse.toFixed(6)).toBe('0.918676');
    expect(run.stderr).toMatch(/Q0 +expected_llm +0\.918676 +0\.177301 +0\.086675 +0\.065928 +223 +3\.282864 +0\.300516/);
  });
});
