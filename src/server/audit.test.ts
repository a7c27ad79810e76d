/**
 * The reward-hacking monitor: answers byte-identical with and without it, its agreement
 * within sampling error of an audit judge's known disagreement, the per-step trend with its
 * warnings and JSONL log, and weight-0 criteria graded and reported, never in the reward.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { Grader } from '../pipeline/grader.js';
import { binaryVerdict } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { JsonLinesWriter } from '../util/files.js';
import { RewardAudit, type AuditOptions } from './audit.js';
import { criterionMet, fruitRubric, fruitScore, startTestServer } from './test-support.js';

const prompt = 'Name some fruit.';

/** Whether the audit judge contradicts the rule on this (criterion, response): about 30% of pairs, by hash. */
function flipped(criterion: string, response: string): boolean {
  return createHash('sha256').update(`${criterion}\u0000${response}`).digest()[0] < 77;
}

function metric(text: string, name: string): number {
  const line = text.split('\n').find((entry) => entry.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
}

describe('the reward-hacking monitor', () => {
  test('answers are byte-identical with and without the monitor, which audits in the background', async ({ closeAfter, scriptedJudge }) => {
    const audit = await scriptedJudge((request) => ({ content: binaryVerdict(!criterionMet(request.criteria[0].text, request.response ?? '')) }));
    const monitor = new RewardAudit({ grader: new Grader({ judge: audit.judge, scoring: 'weighted_mean', omitText: true }), share: 1 });
    const plain = closeAfter(await startTestServer());
    const watched = closeAfter(await startTestServer({ service: { audit: monitor } }));
    const requests: Array<[string, unknown]> = [
      ['/v1/score', { id: 'a', prompt, response: 'Rotten apples.', rubric: fruitRubric, step: 3 }],
      ['/v1/score/batch', { step: 4, items: [{ prompt, response: 'pears', rubric: fruitRubric }, { prompt, response: 'apples and pears', rubric: fruitRubric }] }],
      ['/v1/score/group', { prompt, rubric: fruitRubric, responses: ['apples', 'plums'], advantages: 'grpo', step: 5 }],
    ];
    for (const [path, body] of requests) {
      const [first, second] = await Promise.all([plain.post(path, body), watched.post(path, body)]);
      expect(first.status).toBe(200);
      expect(await second.text(), path).toBe(await first.text());
    }
    await monitor.idle();
    // Every answered item was audited (share 1), and the audit judge contradicted every verdict.
    expect(audit.fake.requests).toHaveLength(5 * 3);
    const metrics = await (await watched.app.request('/metrics')).text();
    expect(metric(metrics, 'rubricate_audit_agreement_ratio')).toBe(0);
    expect(metrics).toContain('rubricate_audit_items_total{outcome="audited"} 5');
  });

  test('reports the agreement of an audit judge that disagrees on a known share of criteria, within sampling error', async ({ closeAfter, scriptedJudge }) => {
    const audit = await scriptedJudge((request) => {
      const text = request.criteria[0].text;
      const response = request.response ?? '';
      return { content: binaryVerdict(criterionMet(text, response) !== flipped(text, response)) };
    });
    const monitor = new RewardAudit({ grader: new Grader({ judge: audit.judge, scoring: 'weighted_mean', omitText: true, calls: { concurrency: 32 } }), share: 0.5 });
    const server = closeAfter(await startTestServer({ service: { audit: monitor, grading: { calls: { concurrency: 32 } } } }));
    const fruit = ['apples', 'pears', 'rotten', 'plums'];
    const items = Array.from({ length: 120 }, (_, index) => ({ prompt, response: `Answer ${index}: ${fruit.filter((_, bit) => (index >> bit) & 1).join(' ')}`, rubric: fruitRubric }));
    const answer = await (await server.post('/v1/score/batch', { items, step: 1 })).json();
    expect(answer.results.map((result: { reward: number }) => result.reward)).toEqual(items.map((item) => fruitScore(item.response)));
    await monitor.idle();
    const audited = audit.fake.requests.length / 3;
    // A sampled share of 0.5 of 120 items: within three standard deviations of 60.
    expect(Math.abs(audited - 60)).toBeLessThan(3 * Math.sqrt(120 * 0.25));
    const metrics = await (await server.app.request('/metrics')).text();
    const agreement = metric(metrics, 'rubricate_audit_agreement_ratio');
    const criteria = audited * 3;
    // The audit judge contradicts each criterion with probability 77/256.
    const expected = 1 - 77 / 256;
    expect(Math.abs(agreement - expected)).toBeLessThan(3 * Math.sqrt((expected * (1 - expected)) / criteria));
    // And it is exactly the share of the audited criteria it contradicted.
    const contradicted = audit.fake.requests.filter((request) => flipped(request.criteria[0].text, request.response ?? '')).length;
    expect(agreement).toBeCloseTo(1 - contradicted / criteria, 12);
    expect(metric(metrics, 'rubricate_audit_step')).toBe(1);
  });

  test('follows agreement and reward gap over training steps, warns when a step crosses the threshold, and logs JSON lines', async ({ closeAfter, scriptedJudge, tempDir }) => {
    // The audit judge is not fooled by "hack": it never counts a criterion met in such a response.
    const audit = await scriptedJudge((request) => ({ content: binaryVerdict(!(request.response ?? '').includes('hack') && criterionMet(request.criteria[0].text, request.response ?? '')) }));
    const log = new JsonLinesWriter(join(tempDir, 'audit.jsonl'));
    const warnings: unknown[] = [];
    const logger = { warn: (object: unknown) => warnings.push(object), error: () => undefined } as unknown as AuditOptions['logger'];
    const monitor = new RewardAudit({ grader: new Grader({ judge: audit.judge, scoring: 'weighted_mean', omitText: true }), share: 1, minAgreement: 0.8, minCriteria: 9, log, logger });
    // The policy judge is fooled: "hack" meets every criterion.
    const server = closeAfter(await startTestServer({ script: (request) => ({ content: binaryVerdict((request.response ?? '').includes('hack') || criterionMet(request.criteria[0].text, request.response ?? '')) }), service: { audit: monitor } }));
    // Step 1: no hacking; step 2: one response in four; step 3: three in four.
    for (const [step, hacks] of [[1, 0], [2, 1], [3, 3]]) {
      const responses = Array.from({ length: 4 }, (_, index) => (index < hacks ? `hack ${step}.${index}` : `apples ${step}.${index}`));
      await server.post('/v1/score/group', { prompt, rubric: fruitRubric, responses, step });
    }
    await monitor.idle();
    await log.close();
    const { steps, agreementTrend, gapTrend } = monitor.summary();
    // "hack" responses: the policy judge says all three criteria met, the audit none.
    expect(steps.map((entry) => [entry.step, entry.agreed / entry.criteria])).toEqual([
      [1, 1],
      [2, 9 / 12],
      [3, 3 / 12],
    ]);
    expect(agreementTrend).toBeLessThan(0);
    expect(gapTrend).toBeGreaterThan(0);
    const lines = readFileSync(join(tempDir, 'audit.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { event: string; step: number; reward_gap?: number });
    expect(lines.filter((line) => line.event === 'audit')).toHaveLength(12);
    expect(lines.filter((line) => line.event === 'audit_warning').map((line) => line.step).sort()).toEqual([2, 3]);
    expect(warnings).toHaveLength(2);
    const hacked = lines.find((line) => line.event === 'audit' && line.step === 3 && line.reward_gap !== 0)!;
    // Policy reward (3 + 1 − 2) ÷ 4 for "hack" (every criterion met, rotten too), audit 0.
    expect(hacked.reward_gap).toBe(0.5);
    const metrics = await (await server.app.request('/metrics')).text();
    expect(metric(metrics, 'rubricate_audit_step_agreement_ratio')).toBe(0.25);
    expect(metric(metrics, 'rubricate_audit_agreement_trend_per_step')).toBeLessThan(0);
    expect(metric(metrics, 'rubricate_audit_warnings_total')).toBe(2);
  });

  test('weight-0 criteria are graded and reported, and never change the reward', async ({ closeAfter, scriptedJudge }) => {
    const audit = await scriptedJudge((request) => ({ content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')) }));
    const monitor = new RewardAudit({ grader: new Grader({ judge: audit.judge, scoring: 'weighted_mean', omitText: true }), share: 1 });
    const server = closeAfter(await startTestServer({ service: { audit: monitor } }));
    const watched = { criteria: [...fruitRubric.criteria, { id: 'flattery', text: 'mentions flattery', points: 0 }] };
    for (const response of ['apples with flattery', 'pears']) {
      const body = await (await server.post('/v1/score', { prompt, response, rubric: watched })).json();
      expect(body.reward).toBe(fruitScore(response));
      expect(body.criteria.find((criterion: { id: string }) => criterion.id === 'flattery')).toMatchObject({ points: 0, status: 'ok', met: response.includes('flattery') });
    }
    await monitor.idle();
    const metrics = await (await server.app.request('/metrics')).text();
    expect(metrics).toContain('rubricate_monitor_criteria_total{met="true"} 1');
    expect(metrics).toContain('rubricate_monitor_criteria_total{met="false"} 1');
  });
});

describe('the reward-hacking monitor with declared reward components', () => {
  test('the audit reward is weighed by the same components as the policy reward: an agreeing audit judge shows no gap', async ({ closeAfter, scriptedJudge }) => {
    const audit = await scriptedJudge((request) => ({ content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')) }));
    const monitor = new RewardAudit({ grader: new Grader({ judge: audit.judge, scoring: 'weighted_mean', omitText: true }), share: 1 });
    const server = closeAfter(await startTestServer({ service: { audit: monitor } }));
    // Weights 1 : 1 give 0.5 for "apples", where the points (3 of 4) would give 0.75.
    const rubric = { ...fruitRubric, reward_components: { 'criterion:apples': 1, 'criterion:pears': 1 } };
    const body = await (await server.post('/v1/score', { prompt, response: 'apples', rubric, step: 1 })).json();
    expect(body.reward).toBe(0.5);
    await monitor.idle();
    const metrics = await (await server.app.request('/metrics')).text();
    expect(metric(metrics, 'rubricate_audit_reward_gap_mean')).toBe(0);
  });
});
