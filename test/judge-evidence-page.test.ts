/**
 * docs/judge-evidence.md says every figure on it comes from a command on it: this runs each of
 * those commands on the data (outputs in a temporary folder) and compares the page's tables and
 * figures with the reports they write. Skipped, and listed, when the data is absent.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { dataDirectory, dataPath, haveData } from '../src/testing/data.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';

const page = readFileSync(path.join(projectRoot, 'docs/judge-evidence.md'), 'utf8');
const available = haveData(dataPath('judge_evidence'), 'the figures of docs/judge-evidence.md (test/judge-evidence-page.test.ts)');

/** The page's `npx rubricate …` lines, as argument lists. */
function pageCommands(): string[][] {
  return page
    .split('\n')
    .filter((line) => line.startsWith('npx rubricate '))
    .map((line) => line.slice('npx rubricate '.length).split(/\s+/));
}

/** Table rows of the page, by their first cell (the first word of it). */
function rows(): Map<string, string[][]> {
  const byName = new Map<string, string[][]>();
  for (const line of page.split('\n')) {
    if (!line.startsWith('| ') || line.startsWith('|---')) continue;
    const cells = line.slice(2, -2).split(' | ');
    const name = cells[0].split(' ')[0];
    byName.set(name, [...(byName.get(name) ?? []), cells.slice(1)]);
  }
  return byName;
}

/** The one row of `name` with `width` figures. */
function row(name: string, width: number): string[] {
  const found = (rows().get(name) ?? []).filter((cells) => cells.length === width);
  expect(found, `${name}: one table row of ${width} figures`).toHaveLength(1);
  return found[0];
}

const fixed = (value: number, digits: number) => value.toFixed(digits);

describe.skipIf(!available)('docs/judge-evidence.md', () => {
  test('every figure on the page is what its commands print', async ({ tempDir }) => {
    const reports = new Map<string, any>();
    const printed = new Map<string, string>();
    const data = `${dataDirectory()}/`;
    // Files the page's commands write and read back (a bare name) live in the temporary folder.
    const local = (arg: string) => (/^[\w.-]+\.jsonl?$/.test(arg) ? path.join(tempDir, arg) : arg.replace(/^replay:([\w.-]+)$/, (_, name: string) => `replay:${path.join(tempDir, name)}`));
    for (const args of pageCommands()) {
      const out = args[args.indexOf('--out') + 1];
      const run = await runCliInProcess(args.map((arg) => local(arg).replace(/^\.\.\/shared\/data\//, data)));
      expect(run.code, `${args.join(' ')}\n${run.stderr}`).toBe(0);
      if (out.endsWith('.json')) reports.set(out, JSON.parse(readFileSync(path.join(tempDir, out), 'utf8')));
      printed.set(out, run.stderr);
    }
    expect(reports.size).toBe(16);

    // LLMJudge: published α beside ours, to 6 decimals; κ beside α, to 4.
    for (const [name, report] of reports) {
      if (!name.startsWith('llmjudge-')) continue;
      const run = report.run as string;
      const alphas = [report.fourPoint, report.binarised.atLeast1, report.binarised.atLeast2, report.binarised.atLeast3].map((entry) => entry.krippendorffAlpha as number);
      const published = (rows().get(run) ?? []).find((cells) => cells.length === 8);
      if (published) {
        expect(published.filter((_, index) => index % 2 === 1)).toEqual(alphas.map((value) => fixed(value, 6)));
        expect(published.filter((_, index) => index % 2 === 0)).toEqual(alphas.map((value) => fixed(value, 6)));
      }
      expect(row(run, 4)).toEqual([alphas[0], report.fourPoint.cohenKappa, report.fourPoint.cohenKappaQuadratic, report.binarised.atLeast2.cohenKappa].map((value) => fixed(value, 4)));
    }
    const fewself = reports.get('llmjudge-h2oloo-fewself.json');
    expect(fewself.binarised.atLeast2.confusion).toEqual([[2719, 519], [483, 702]]);
    // The report's keys are fixed (the page lists them), and the table is printed.
    expect(Object.keys(fewself)).toEqual(['format', 'inputs', 'run', 'pairs', 'fourPoint', 'binarised']);
    expect(Object.keys(fewself.binarised)).toEqual(['atLeast1', 'atLeast2', 'atLeast3']);
    expect(Object.keys(fewself.pairs)).toEqual(['labelled', 'judged', 'missingFromRun', 'unlabelledInRun', 'clipped']);
    expect(Object.keys(fewself.fourPoint)).toEqual(['krippendorffAlpha', 'cohenKappa', 'confusion', 'cohenKappaQuadratic', 'accuracy']);
    expect(printed.get('llmjudge-h2oloo-fewself.json')).toMatch(/4-point +0\.4958 +0\.2774/);

    // LLM-Rubric: the README's Q0 rows, Q1–Q8, the human ceiling.
    const baselines = reports.get('llm-rubric-baselines.json');
    const figures = (entry: any) => [entry.rmse, entry.pearson.value, entry.spearman.value, entry.kendall.value];
    for (const system of ['sample', 'argmax', 'expected']) {
      const entry = baselines.baselines.Q0[system];
      expect(row(`${system}_llm`, 7)).toEqual([...figures(entry).map((value) => fixed(value, 6)), String(entry.n), fixed(entry.mean, 6), fixed(entry.std, 6)]);
    }
    for (const question of ['Q1', 'Q2', 'Q3', 'Q4', 'Q5', 'Q6', 'Q7', 'Q8']) {
      const entry = baselines.baselines[question].expected;
      expect(row(question, 5)).toEqual([...figures(entry).map((value) => fixed(value, 6)), String(entry.n)]);
    }
    expect(printed.get('llm-rubric-baselines.json')).toMatch(/Q0 +expected_llm +0\.918676 +0\.177301 +0\.086675 +0\.065928 +223 +3\.282864 +0\.300516/);
    const ceiling = baselines.humanCeiling.questions.Q0;
    const correlations = (entry: any) => [entry.pearson.value, entry.spearman.value, entry.kendall.value, entry.rmse];
    expect(row('annotator', 4)).toEqual(correlations(ceiling.pairwise).map((value) => fixed(value, 6)));
    expect(row("judge's", 4)).toEqual(correlations(ceiling.judgeExpected).map((value) => fixed(value, 6)));
    expect(page).toContain(`gives Pearson ${fixed(ceiling.pairwise.pearson.value, 3)}, and Krippendorff's α (ordinal) among them is ${fixed(ceiling.krippendorffAlpha, 3)}`);
    expect(page).toContain(`over ${ceiling.dialogues} dialogues`);
    expect(page).toContain(`reaches Pearson ${fixed(ceiling.judgeExpected.pearson.value, 3)} against the annotators`);

    // LLM-Rubric replayed: the graded lines give back the README's argmax row.
    const replayed = reports.get('llm-rubric-replayed-rows.json');
    expect(replayed.graded.judge).toMatchObject({ model: 'gpt-3.5-turbo-16k', replayed: true });
    expect(replayed.graded.questions.Q0.argmax).toEqual(baselines.baselines.Q0.argmax);
    const replayedQ0 = replayed.graded.questions.Q0;
    expect(page).toContain(`(Q0: RMSE ${fixed(replayedQ0.argmax.rmse, 6)}, Pearson ${fixed(replayedQ0.argmax.pearson.value, 6)})`);
    expect(page).toContain(`on Q0 it gives RMSE ${fixed(replayedQ0.expectedScore.rmse, 6)} and Pearson ${fixed(replayedQ0.expectedScore.pearson.value, 6)}, where the README's Σ k·P(k)\ngives ${fixed(baselines.baselines.Q0.expected.rmse, 6)} and ${fixed(baselines.baselines.Q0.expected.pearson.value, 6)}`);
    expect(printed.get('llm-rubric-write-replay.json')).toContain('2007 recorded verdicts of gpt-3.5-turbo-16k');

    // Calibration: the chosen model and the real-set figures.
    const calibration = reports.get('llm-rubric-calibration.json');
    expect(calibration.chosen).toEqual({ lambda: 10, featureSet: 'expected-answers', annotatorTerms: true });
    expect(page).toContain('chose the nine expected answers with per-annotator terms and penalty 10');
    expect(row('calibrated', 4)).toEqual(correlations(calibration.test.calibrated).map((value) => fixed(value, 4)));
    expect(row('raw', 4)).toEqual(correlations(calibration.test.rawExpected).map((value) => fixed(value, 4)));
    expect(page).toContain(`[${calibration.test.calibrated.pearson.interval.map((value: number) => fixed(value, 3)).join(', ')}]`);
    expect(page).toContain(`Pearson ${fixed(calibration.test.rawExpected.pearson.value, 3)} → ${fixed(calibration.test.calibrated.pearson.value, 3)} on the real set`);
    const otherFolds = reports.get('llm-rubric-calibration-seed1.json');
    expect(page).toContain(`with \`--seed 1\`, cross-validation\npicks penalty ${otherFolds.chosen.lambda} and the real-set Pearson is ${fixed(otherFolds.test.calibrated.pearson.value, 3)}`);
  });
});
