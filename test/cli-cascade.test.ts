/**
 * `rubricate grade` with a cascade: the second judge named as a JSON model spec (its own
 * endpoint), the band escalating exactly the criteria inside it, the deciding judge on each
 * line, the tally in the metrics and on stderr; and `--dry-run` counting the later judge as an
 * upper bound.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { FakeJudgeRequest } from '../src/testing/fake-judge.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { runCliInProcess } from './helpers.js';

function replyWithProbability(p: number) {
  const met = p >= 0.5;
  const tokens = ['{"criteria_met": ', String(met), '}'].map((token, index) => ({
    token,
    logprob: index === 1 ? Math.log(met ? p : 1 - p) : 0,
    top_logprobs: index === 1 ? [{ token: 'true', logprob: Math.log(p) }, { token: 'false', logprob: Math.log(1 - p) }] : [{ token, logprob: 0 }],
  }));
  return { content: `{"criteria_met": ${met}}`, logprobs: { content: tokens } };
}

const probabilities: Record<string, number> = { sure: 0.97, unsure: 0.55, wrong: 0.1 };

function writeItems(directory: string): string {
  const file = join(directory, 'items.jsonl');
  const criteria = Object.keys(probabilities).map((id) => ({ id, text: `criterion ${id}` }));
  writeFileSync(file, `${JSON.stringify({ id: 'q1', prompt: 'Is 38°C a fever?', response: 'Yes, a mild one.', rubric: { criteria } })}\n`);
  return file;
}

describe('grade with a cascade', () => {
  test('escalates the criteria inside the band to the second judge and says which judge decided each', async ({ startJudge, tempDir }) => {
    const small = await startJudge((request: FakeJudgeRequest) => replyWithProbability(probabilities[request.criteria[0].id]));
    const strong = await startJudge(() => replyWithProbability(0.02));
    const out = join(tempDir, 'results.jsonl');
    const metrics = join(tempDir, 'metrics.json');
    const cascadeJudge = JSON.stringify({ model: 'openai:strong', endpoint: { baseUrl: strong.baseUrl } });
    const result = await runCliInProcess(['grade', '--input', writeItems(tempDir), '--out', out, '--metrics', metrics, '--judge', 'openai:small', '--judge-base-url', small.baseUrl, '--verdict', 'probability', '--cascade-judge', cascadeJudge, '--escalate-band', '0.3,0.7', '--no-cache']);
    expect(result.code, result.stderr).toBe(0);
    expect(strong.requests.map((request) => request.criteria[0].id)).toEqual(['unsure']);
    const line = JSON.parse(readFileSync(out, 'utf8')) as { criteria: Array<{ id: string; met: boolean; cascade: { decided_by: string } }>; judge: { cascade: unknown } };
    expect(line.criteria.map((criterion) => [criterion.id, criterion.met, criterion.cascade.decided_by])).toEqual([
      ['sure', true, 'openai:small'],
      ['unsure', false, 'openai:strong'],
      ['wrong', false, 'openai:small'],
    ]);
    expect(line.judge.cascade).toEqual({ judges: ['openai:strong'], band: [0.3, 0.7], escalate_on: ['band', 'abstain', 'error'] });
    expect(JSON.parse(readFileSync(metrics, 'utf8')).cascade).toEqual({ decided_by: { 'openai:small': 2, 'openai:strong': 1 }, escalated_from: { 'openai:small': { band: 1 } } });
    expect(result.stderr).toMatch(/^cascade: decided 2 by openai:small, 1 by openai:strong; openai:small escalated 1 \(band\)$/m);
  });

  test('--dry-run counts the second judge as if every judged criterion escalated', async ({ startJudge, tempDir }) => {
    const small = await startJudge(() => replyWithProbability(0.5));
    const result = await runCliInProcess(['grade', '--input', writeItems(tempDir), '--out', join(tempDir, 'results.jsonl'), '--judge', 'openai:gpt-4.1-mini', '--judge-base-url', small.baseUrl, '--verdict', 'probability', '--cascade-judge', JSON.stringify({ model: 'openai:gpt-4.1', endpoint: { baseUrl: small.baseUrl } }), '--escalate-band', '0.3,0.7', '--dry-run']);
    expect(result.code, result.stderr).toBe(0);
    const estimate = JSON.parse(result.stdout);
    expect(estimate.judge_calls).toBe(3);
    expect(estimate.cascade).toEqual([expect.objectContaining({ judge: 'openai:gpt-4.1', upper_bound: true, judge_calls: 3 })]);
    expect(small.requests).toHaveLength(0);
  });

  test('a band without probability verdicts, or without a second judge, is refused before any call', async ({ startJudge, tempDir }) => {
    const small = await startJudge(() => replyWithProbability(0.5));
    const base = ['grade', '--input', writeItems(tempDir), '--out', join(tempDir, 'results.jsonl'), '--judge', 'openai:small', '--judge-base-url', small.baseUrl, '--no-cache'];
    const binary = await runCliInProcess([...base, '--cascade-judge', JSON.stringify({ model: 'openai:strong', endpoint: { baseUrl: small.baseUrl } }), '--escalate-band', '0.3,0.7']);
    expect(binary.code).toBe(2);
    expect(binary.stderr).toMatch(/--escalate-band .*--verdict probability/);
    const alone = await runCliInProcess([...base, '--verdict', 'probability', '--escalate-band', '0.3,0.7']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/add --cascade-judge/);
    expect(small.requests).toHaveLength(0);
  });
});
