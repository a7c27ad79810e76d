/**
 * A score calibration end to end: a recorded judge's per-criterion probabilities graded through
 * `grade`, `calibrate --format results` fitted on a training split of items against the overall
 * scores people gave, and `grade --calibration` (and `rejudge --calibration`) adding the calibrated score to every result.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { seededRandom } from '../src/util/random.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { runCliInProcess } from './helpers.js';

const criteria = ['clear', 'correct', 'polite'];

/** 40 items; people's overall score (1–4) follows two of the recorded probabilities, not the third. */
function writeCase(directory: string, leaveOut?: string) {
  const random = seededRandom(7);
  const items = join(directory, 'items.jsonl');
  const verdicts = join(directory, 'verdicts.jsonl');
  const scores = join(directory, 'scores.jsonl');
  const ids = Array.from({ length: 40 }, (_, index) => `d${index}`);
  const probabilities = ids.map(() => criteria.map(() => Math.round(random() * 1000) / 1000));
  writeFileSync(items, ids.map((id) => JSON.stringify({ id, prompt: `Question ${id}`, response: `Answer ${id}`, rubric: { criteria: criteria.map((name) => ({ id: name, text: `The answer is ${name}`, points: 1 })) } })).join('\n'));
  writeFileSync(
    verdicts,
    ids
      .flatMap((id, index) => criteria.map((name, column) => ({ judge: 'gpt-4o', id, criterion_id: name, probability: probabilities[index][column] })))
      .filter((line) => `${line.id}/${line.criterion_id}` !== leaveOut)
      .map((line) => JSON.stringify(line))
      .join('\n'),
  );
  writeFileSync(scores, ids.map((id, index) => JSON.stringify({ id, score: 1 + 2 * probabilities[index][1] + probabilities[index][0] + (random() - 0.5) * 0.2 })).join('\n'));
  return { items, verdicts, scores };
}

function lines(file: string): Array<Record<string, any>> {
  return readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
}

describe('calibrate --format results and grade --calibration', () => {
  test('learns the overall score on the training items, tests on the others, and grade applies it', async ({ tempDir }) => {
    const { items, verdicts, scores } = writeCase(tempDir);
    const judge = ['--judge', `replay:${verdicts}`, '--verdict', 'probability', '--quiet'];
    const results = join(tempDir, 'results.jsonl');
    expect((await runCliInProcess(['grade', '--input', items, '--out', results, ...judge])).code).toBe(0);
    const calibrationFile = join(tempDir, 'calibration.json');
    const fitted = await runCliInProcess(['calibrate', '--format', 'results', '--input', results, '--labels', scores, '--out', calibrationFile]);
    expect(fitted.code, fitted.stderr).toBe(0);
    const calibration = JSON.parse(readFileSync(calibrationFile, 'utf8'));
    expect(calibration.criteria).toEqual([...criteria].sort());
    expect(calibration.fit.split.test).toHaveLength(12);
    expect(new Set([...calibration.fit.split.train, ...calibration.fit.split.test]).size).toBe(40);
    // People follow "correct" twice as much as "clear", and not "polite".
    const [clear, correct, polite] = calibration.coefficients as number[];
    expect(correct).toBeGreaterThan(clear);
    expect(Math.abs(polite)).toBeLessThan(clear);
    expect(calibration.fit.test.calibrated.pearson.value).toBeGreaterThan(0.9);
    expect(calibration.fit.test.calibrated.pearson.value).toBeGreaterThan(calibration.fit.test.rawScore.pearson.value);
    expect(fitted.stderr).toContain('calibrated score');

    const calibrated = join(tempDir, 'calibrated.jsonl');
    expect((await runCliInProcess(['grade', '--input', items, '--out', calibrated, '--calibration', calibrationFile, ...judge])).code).toBe(0);
    for (const result of lines(calibrated)) {
      const byId = new Map(result.criteria.map((criterion: { id: string; probability: number }) => [criterion.id, criterion.probability]));
      const expected = calibration.intercept + (calibration.criteria as string[]).reduce((sum, id, index) => sum + calibration.coefficients[index] * (byId.get(id) as number), 0);
      expect(result.calibration).toMatchObject({ target: 'overall human score', hash: calibration.hash });
      expect(result.calibration.score).toBeCloseTo(Math.min(calibration.range[1], Math.max(calibration.range[0], expected)), 12);
    }

    // rejudge applies the same calibration to the results it grades again.
    const rejudged = join(tempDir, 'rejudged.jsonl');
    const again = await runCliInProcess(['rejudge', '--input', results, '--out', rejudged, '--calibration', calibrationFile, ...judge]);
    expect(again.code, again.stderr).toBe(0);
    const graded = new Map(lines(calibrated).map((result) => [result.id, result.calibration]));
    const rejudgedLines = lines(rejudged);
    expect(rejudgedLines).toHaveLength(40);
    for (const result of rejudgedLines) expect(result.calibration).toEqual(graded.get(result.id));
  });

  test('a result without a verdict the calibration reads gets no calibrated score, and an edited file is refused', async ({ tempDir }) => {
    const { items, verdicts, scores } = writeCase(tempDir);
    const judge = ['--judge', `replay:${verdicts}`, '--verdict', 'probability', '--quiet'];
    const results = join(tempDir, 'results.jsonl');
    expect((await runCliInProcess(['grade', '--input', items, '--out', results, ...judge])).code).toBe(0);
    const calibrationFile = join(tempDir, 'calibration.json');
    expect((await runCliInProcess(['calibrate', '--format', 'results', '--input', results, '--labels', scores, '--out', calibrationFile, '--quiet'])).code).toBe(0);

    // The same case recorded without one verdict.
    const folder = join(tempDir, 'partial');
    mkdirSync(folder);
    const withGap = writeCase(folder, 'd5/polite');
    const partial = join(tempDir, 'partial.jsonl');
    const run = await runCliInProcess(['grade', '--input', withGap.items, '--out', partial, '--calibration', calibrationFile, '--judge', `replay:${withGap.verdicts}`, '--verdict', 'probability', '--quiet']);
    expect(run.code).not.toBe(0);
    const missing = lines(partial).find((result) => result.id === 'd5')!;
    expect(missing.calibration).toMatchObject({ score: null, missing: ['polite'] });
    expect(lines(partial).find((result) => result.id === 'd6')!.calibration.score).toEqual(expect.any(Number));

    const edited = JSON.parse(readFileSync(calibrationFile, 'utf8'));
    edited.intercept += 1;
    writeFileSync(calibrationFile, JSON.stringify(edited));
    const refused = await runCliInProcess(['grade', '--input', items, '--out', join(tempDir, 'x.jsonl'), '--calibration', calibrationFile, ...judge]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('hash does not match');
  });
});
