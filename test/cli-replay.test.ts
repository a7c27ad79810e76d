/**
 * `--judge replay:FILE` end to end: recorded verdicts (met/unmet, probabilities, Likert
 * distributions) through `grade`, `meta --format results` and `align`, with the provenance of a
 * replayed judge on every line; a verdict missing from the file is an error on that criterion.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { runCliInProcess } from './helpers.js';

const scale = { type: 'ordinal', choices: ['1', '2', '3', '4'].map((label) => ({ label })) };

/** 12 items; the recorded judge says "met" with probability rising with the item number. */
function writeCase(directory: string, options: { leaveOut?: string; binaryOnly?: boolean } = {}): { items: string; verdicts: string; labels: string } {
  const items = join(directory, 'items.jsonl');
  const verdicts = join(directory, 'verdicts.jsonl');
  const labels = join(directory, 'labels.jsonl');
  const ids = Array.from({ length: 12 }, (_, index) => `i${index}`);
  writeFileSync(
    items,
    ids
      .map((id, index) =>
        JSON.stringify({
          id,
          prompt: 'Same question for every item',
          response: `Answer ${index % 2}`,
          rubric: { criteria: [{ id: 'correct', text: 'The answer is correct', points: 1 }, ...(options.binaryOnly ? [] : [{ id: 'overall', text: 'Overall quality', points: 1, scale }])] },
        }),
      )
      .join('\n'),
  );
  const recorded = ids.flatMap((id, index) => {
    const probability = (index + 0.5) / 12;
    const lines = [
      { judge: 'gpt-4o-2024-08-06', id, criterion_id: 'correct', probability },
      { judge: 'gpt-4o-2024-08-06', id, criterion_id: 'overall', distribution: { '1': 0.25, '2': 0.25 - probability / 8, '3': 0.25, '4': 0.25 + probability / 8 } },
    ];
    return lines.filter((line) => `${line.id}/${line.criterion_id}` !== options.leaveOut);
  });
  writeFileSync(verdicts, recorded.map((line) => JSON.stringify(line)).join('\n'));
  // People agree with the recorded judge above 0.5, except on two items.
  writeFileSync(labels, ids.map((id, index) => JSON.stringify({ id, labels: { correct: index === 2 || index === 9 ? index < 6 : index >= 6 } })).join('\n'));
  return { items, verdicts, labels };
}

function lines(file: string): Array<Record<string, any>> {
  return readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
}

describe('the replay judge', () => {
  test('grades from recorded probabilities and Likert distributions, with replayed provenance', async ({ tempDir }) => {
    const { items, verdicts } = writeCase(tempDir);
    const results = join(tempDir, 'results.jsonl');
    const run = await runCliInProcess(['grade', '--input', items, '--out', results, '--judge', `replay:${verdicts}`, '--verdict', 'expected-score', '--cache', join(tempDir, 'cache.sqlite'), '--quiet']);
    expect(run.code, run.stderr).toBe(0);
    const graded = lines(results);
    expect(graded).toHaveLength(12);
    for (const [index, result] of graded.entries()) {
      expect(result.judge).toMatchObject({ id: `replay:${verdicts}`, model: 'gpt-4o-2024-08-06', settings: { replayed: true, recorded_judge: 'gpt-4o-2024-08-06', verdicts: 'verdicts.jsonl' } });
      const correct = result.criteria.find((criterion: { id: string }) => criterion.id === 'correct');
      const overall = result.criteria.find((criterion: { id: string }) => criterion.id === 'overall');
      const probability = (index + 0.5) / 12;
      // The same prompt and response on every other item: answered by item, not by text.
      expect(correct.probability).toBeCloseTo(probability, 12);
      expect(correct.met).toBe(probability >= 0.5);
      expect(correct.explanation).toContain('replayed verdict');
      const distribution = [0.25, 0.25 - probability / 8, 0.25, 0.25 + probability / 8];
      const expected = distribution.reduce((sum, weight, label) => sum + weight * (label + 1), 0);
      expect(overall.expected_score ?? overall.expectedScore).toBeCloseTo(expected, 9);
      expect(overall.label).toBe('4');
    }
  });

  test('a verdict missing from the file is an error on that criterion, never a default', async ({ tempDir }) => {
    const { items, verdicts } = writeCase(tempDir, { leaveOut: 'i3/correct' });
    const results = join(tempDir, 'results.jsonl');
    const run = await runCliInProcess(['grade', '--input', items, '--out', results, '--judge', `replay:${verdicts}`, '--quiet']);
    expect(run.code).not.toBe(0);
    const missing = lines(results).find((result) => result.id === 'i3')!;
    const correct = missing.criteria.find((criterion: { id: string }) => criterion.id === 'correct');
    expect(correct.status).toBe('error');
    expect(correct.met ?? null).toBeNull();
    expect(JSON.stringify(correct.error)).toContain('JUDGE_NOT_RECORDED');
    expect(lines(results).find((result) => result.id === 'i4')!.criteria.every((criterion: { status: string }) => criterion.status === 'ok')).toBe(true);
  });

  test('meta and align run on the replayed verdicts', async ({ tempDir }) => {
    // align rebuilds rubrics from results lines, which keep no scales: binary criteria only.
    const { items, verdicts, labels } = writeCase(tempDir, { binaryOnly: true });
    const results = join(tempDir, 'results.jsonl');
    const cache = join(tempDir, 'cache.sqlite');
    const judge = ['--judge', `replay:${verdicts}`, '--cache', cache, '--quiet'];
    expect((await runCliInProcess(['grade', '--input', items, '--out', results, '--verdict', 'probability', ...judge])).code).toBe(0);
    const metaOut = join(tempDir, 'meta.json');
    const meta = await runCliInProcess(['meta', '--format', 'results', '--input', results, '--labels', labels, '--out', metaOut, '--bootstrap-resamples', '0']);
    expect(meta.code, meta.stderr).toBe(0);
    const report = JSON.parse(readFileSync(metaOut, 'utf8'));
    // 10 of 12 agree: the recorded judge's verdicts, not made-up ones.
    expect(report.overall.accuracy).toBeCloseTo(10 / 12, 12);
    const alignmentFile = join(tempDir, 'alignment.json');
    // People's overall score of each item follows the recorded P(met): align offers a score calibration beside its own.
    const scores = join(tempDir, 'scores.jsonl');
    writeFileSync(scores, Array.from({ length: 12 }, (_, index) => JSON.stringify({ id: `i${index}`, score: 1 + 3 * ((index + 0.5) / 12) + (index % 3) * 0.01 })).join('\n'));
    const calibrationFile = join(tempDir, 'calibration.json');
    const aligned = await runCliInProcess(['align', '--input', results, '--labels', labels, '--out', alignmentFile, '--no-reword', '--bootstrap-resamples', '0', '--verdict', 'probability', '--scores', scores, '--calibration-out', calibrationFile, ...judge]);
    expect(aligned.code, aligned.stderr).toBe(0);
    const alignment = JSON.parse(readFileSync(alignmentFile, 'utf8'));
    expect(alignment.calibrator.kind).toBe('isotonic');
    const calibration = JSON.parse(readFileSync(calibrationFile, 'utf8'));
    expect(calibration.fit.split).toMatchObject({ from: 'align', train: alignment.fit.split.train, test: alignment.fit.split.test });
    expect(calibration.criteria).toEqual(['correct']);
    expect(calibration.fit.test.calibrated.pearson.value).toBeGreaterThan(0.99);
    expect(aligned.stderr).toContain('score calibration:');
    expect(alignment.fit.report.test.after.accuracy).toBeGreaterThanOrEqual(0);
  });
});
