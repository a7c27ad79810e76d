import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect } from 'vitest';
import type { FakeJudgeScript } from '../../testing/fake-judge.js';
import { test } from '../../testing/vitest-fixtures.js';
import { runCli } from '../main.js';
import { captureOutput } from '../in-process.js';


const rubric = (criteria: string) => ({
  criteria,
  score1_description: 'poor',
  score2_description: 'weak',
  score3_description: 'fair',
  score4_description: 'good',
  score5_description: 'excellent',
});

/** A Prometheus-style judge: the score is the digit written in the response under evaluation. */
const prometheusJudge: FakeJudgeScript = (request) => {
  const response = /###Response to evaluate:\n([\s\S]*?)\n\n###/.exec(request.userText)?.[1] ?? '';
  const digit = /score me (\d)/.exec(response)?.[1];
  return { content: digit ? `Feedback on the response. [RESULT] ${digit}` : 'I cannot decide.' };
};

describe('grade --format biggen --judge-protocol prometheus', () => {
  test('skips the llm_judge instances, grades the rest in Prometheus layout, and reports Overall = mean of capability means', async ({ startJudge, tempDir }) => {
    const instances = {
      planning_trip_0: { id: 'planning_trip_0', capability: 'planning', task: 'trip', input: 'Plan a trip.', reference_answer: 'A plan.', score_rubric: rubric('Is it a plan?'), response: 'score me 5' },
      planning_trip_1: { id: 'planning_trip_1', capability: 'planning', task: 'trip', input: 'Plan a day.', reference_answer: 'A plan.', score_rubric: rubric('Is it a plan?'), response: 'score me 4' },
      reasoning_math_0: { id: 'reasoning_math_0', capability: 'reasoning', task: 'math', input: '2+2?', reference_answer: '4', score_rubric: rubric('Correct?'), response: 'score me 1' },
      refinement_llm_judge_absolute_0: { id: 'refinement_llm_judge_absolute_0', capability: 'refinement', task: 'llm_judge_absolute', input: 'Grade this.', reference_answer: '3', score_rubric: rubric('Good grading?'), response: 'score me 2' },
    };
    const fake = await startJudge(prometheusJudge);
    const input = path.join(tempDir, 'biggen.json');
    await writeFile(input, JSON.stringify(instances));
    const out = path.join(tempDir, 'biggen-results.jsonl');
    const metricsFile = path.join(tempDir, 'biggen-metrics.json');
    const { output, context } = captureOutput();
    const code = await runCli(
      ['grade', '--format', 'biggen', '--input', input, '--out', out, '--metrics', metricsFile, '--judge', 'openai:prometheus-7b-v2.0', '--judge-base-url', fake.baseUrl, '--judge-api-key', 'k', '--judge-protocol', 'prometheus', '--no-cache', '--quiet'],
      context,
    );
    expect(code).toBe(0);
    const lines = (await readFile(out, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { id: string; criteria: Array<{ label: string }> });
    expect(lines.map((line) => line.id)).toEqual(['planning_trip_0', 'planning_trip_1', 'reasoning_math_0']);
    expect(fake.requests.every((request) => request.userText.startsWith('###Task Description:'))).toBe(true);
    const metrics = JSON.parse(await readFile(metricsFile, 'utf8')) as { scoring: string; overall: { score: number }; extra: { biggen_printed: Record<string, string> }; skipped: Array<{ count: number; reason: string }> };
    // planning (5 + 4) / 2 = 4.5; reasoning 1 → Overall (4.5 + 1) / 2 = 2.75 (all instances: 10 / 3 = 3.333).
    expect(metrics.scoring).toBe('biggen');
    expect(metrics.overall.score).toBe(2.75);
    expect(metrics.extra.biggen_printed).toMatchObject({ planning: '4.500', reasoning: '1.000', Overall: '2.750', refinement: 'N/A' });
    expect(metrics.skipped).toEqual([{ count: 1, reason: 'BiGGen-Bench does not grade llm_judge instances with a Prometheus judge' }]);
    expect(output.stderr.join('\n')).toMatch(/skipped 1 record\(s\): BiGGen-Bench does not grade llm_judge instances/);
  });
});

describe('score --failed-as-zero', () => {
  test('counts failed judge calls as not met only when asked, and says so', async ({ tempDir }) => {
    const results = path.join(tempDir, 'rr-results.jsonl');
    const criterion = (points: number, status: 'ok' | 'error', met: boolean | null) => ({ id: `c${points}${status}`, text: 't', points, tags: [], kind: 'principle', source: 'judge', status, met });
    await writeFile(
      results,
      [
        { id: 'a', status: 'error', score: null, scoring: 'compliance', criteria: [criterion(4, 'ok', true), criterion(4, 'error', null)], rubricate_version: '0' },
        { id: 'b', status: 'ok', score: 1, scoring: 'compliance', criteria: [criterion(2, 'ok', true)], rubricate_version: '0' },
      ]
        .map((line) => JSON.stringify(line))
        .join('\n'),
    );
    const plain = captureOutput();
    await runCli(['score', '--input', results], plain.context);
    const byDefault = JSON.parse(plain.output.stdout.join('')) as { overall: { score: number }; n_error: number; failed_as_zero?: unknown };
    // By default item a has no score: only b (1.0) counts.
    expect([byDefault.overall.score, byDefault.n_error, byDefault.failed_as_zero]).toEqual([1, 1, undefined]);
    const zero = captureOutput();
    await runCli(['score', '--input', results, '--failed-as-zero'], zero.context);
    const counted = JSON.parse(zero.output.stdout.join('')) as { overall: { score: number }; failed_as_zero: { items: number; criteria: number } };
    // a: 4 of 8 → 0.5; mean with b (1.0) = 0.75.
    expect(counted.overall.score).toBe(0.75);
    expect(counted.failed_as_zero).toEqual({ items: 1, criteria: 1 });
    expect(zero.output.stderr.join('\n')).toMatch(/--failed-as-zero: 1 failed judge call/);
  });
});
