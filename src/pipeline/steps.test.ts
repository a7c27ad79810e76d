import { describe, expect, test } from 'vitest';
import type { CriterionResult } from '../grading/types.js';
import type { Criterion } from '../rubric/schema.js';
import { foldSteps } from './steps.js';

// Step values 0.5, 1, 0, 0.75, folded by hand (the formulas: src/scoring/step-aggregate.ts).
const values = [0.5, 1, 0, 0.75];

describe('foldSteps', () => {
  const criterion: Criterion = { id: 'useful', text: 'The step is useful', points: 1, tags: [], kind: 'principle', scope: 'step' };
  const ok = (value: number): CriterionResult => ({ criterion, source: 'judge', status: 'ok', verdict: { met: value >= 0.5, value, source: 'judge' } });

  test('each rule gives the folded value, met from one half, and keeps every step', () => {
    const perStep = values.map((value, index) => ({ step: index + 1, result: ok(value) }));
    const folded = foldSteps(criterion, perStep, { rule: 'discounted', gamma: 0.5 });
    expect(folded.status).toBe('ok');
    expect(folded.verdict?.value).toBeCloseTo(1.09375 / 1.875, 15);
    expect(folded.verdict?.met).toBe(true);
    expect(folded.process?.results.map((result) => [result.step, result.verdict?.value])).toEqual(values.map((value, index) => [index + 1, value]));
    expect(foldSteps(criterion, perStep, { rule: 'min' }).verdict).toMatchObject({ value: 0, met: false });
  });

  test('a failed step makes the criterion an error naming the step, never a value', () => {
    const failed: CriterionResult = { criterion, source: 'judge', status: 'error', error: { code: 'JUDGE_UNPARSEABLE', message: 'no verdict in the reply' } };
    const perStep = [
      { step: 1, result: ok(1) },
      { step: 2, result: failed },
      { step: 3, result: ok(1) },
    ];
    for (const rule of ['min', 'mean', 'last'] as const) {
      const folded = foldSteps(criterion, perStep, { rule });
      expect(folded.status).toBe('error');
      expect(folded.verdict).toBeUndefined();
      expect(folded.error).toEqual({ code: 'JUDGE_UNPARSEABLE', message: 'step 2: no verdict in the reply' });
      expect(folded.process?.results[1].status).toBe('error');
    }
  });
});
