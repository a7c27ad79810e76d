/**
 * `POST /v1/rubrics/distill` in process: bounds refused before any call, and a generator or judge
 * that fails is an error answer with its code, never a rubric.
 */
import { describe, expect } from 'vitest';
import { answer, generatorAndJudge, mentions } from '../generation/fixtures/fake-generator.js';
import type { FakeJudgeScript } from '../testing/fake-judge.js';
import { test, type RubricateFixtures } from '../testing/vitest-fixtures.js';
import { createRubricGenerator } from '../generation/generator.js';
import { createServerApp } from './app.js';
import { maxDistillRequestPairs } from './distill.js';
import { startTestServer } from './test-support.js';

/** The rejected responses of even pairs say "sorry", so the two criteria tell different pairs apart (distinct verdict vectors). */
const pair = (index: number) => ({ id: `p${index}`, prompt: `Question ${index % 2}?`, response_a: 'Because of this, for example.', response_b: index % 2 === 0 ? 'Sorry, no.' : 'No.', label: 'A' });
const pairs = [0, 1, 2, 3].map(pair);

async function setup({ closeAfter, connectJudge }: Pick<RubricateFixtures, 'closeAfter' | 'connectJudge'>, script: FakeJudgeScript, maxBodyBytes?: number) {
  const server = closeAfter(await startTestServer({ script }));
  const generator = createRubricGenerator({ generator: connectJudge(server.fake, { model: 'writer' }), minCriteria: 1, maxAttempts: 1, retryBaseDelayMs: 1 });
  const app = createServerApp({ service: server.service, distill: { generator }, ...(maxBodyBytes ? { maxBodyBytes } : {}) });
  const post = async (body: unknown) => {
    const response = await app.request('/v1/rubrics/distill', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };
  return { post, fake: server.fake };
}

const proposing = generatorAndJudge((_request, task) => ({ content: answer(task === 'contrastive' || task === 'distill' ? [mentions('because'), mentions('sorry', 'Pitfall')] : []) }));

describe('POST /v1/rubrics/distill', () => {
  test('distils with the server judge and generator: every criterion with its provenance, not labelled as made up', async ({ closeAfter, connectJudge }) => {
    const { post } = await setup({ closeAfter, connectJudge }, proposing);
    const distilled = await post({ pairs, limits: { harden_pairs: 0 } });
    expect(distilled.status).toBe(200);
    expect(distilled.body.scripted).toBeUndefined();
    expect(distilled.body.rubric.metadata.generic).toBe(true);
    expect(distilled.body.rubric.criteria.map((criterion: { text: string }) => criterion.text).sort()).toEqual(['The response mentions "because".', 'The response mentions "sorry".']);
    const figures = Object.fromEntries(distilled.body.rubric.criteria.map((criterion: { text: string; metadata: { distill: Record<string, unknown> } }) => [criterion.text, criterion.metadata.distill]));
    expect(figures['The response mentions "because".']).toMatchObject({ origin: 'propose', agree: 4, disagree: 0, ties: 0, errors: 0 });
    expect(figures['The response mentions "sorry".']).toMatchObject({ origin: 'propose', agree: 2, disagree: 0, ties: 2, errors: 0 });
    expect(distilled.body.summary.input).toMatchObject({ pairs: 4, prompts: 2, pairs_used: 4 });
  });

  test('refuses over a bound before any call: the body, the pairs, a limit above the CLI default, the samples', async ({ closeAfter, connectJudge }) => {
    const { post, fake } = await setup({ closeAfter, connectJudge }, proposing, 64 * 1024);
    const many = await post({ pairs: Array.from({ length: maxDistillRequestPairs + 1 }, () => ({})) });
    expect(many.status).toBe(413);
    expect(many.body.error).toMatchObject({ code: 'LIMIT_EXCEEDED', message: expect.stringContaining(`pairs: ${maxDistillRequestPairs + 1} is over the bound`) });
    const large = await post({ pairs: [{ ...pair(0), response_a: 'x'.repeat(70 * 1024) }] });
    expect(large.status).toBe(413);
    for (const [limits, field] of [[{ candidates: 17 }, 'limits.candidates'], [{ size: 9 }, 'limits.size'], [{ prompts: 21 }, 'limits.prompts']] as const) {
      const refused = await post({ pairs, limits });
      expect(refused.status).toBe(413);
      expect(refused.body.error.message).toContain(`${field}: `);
    }
    const samples = await post({ pairs, samples: 5 });
    expect(samples.status).toBe(413);
    const unknown = await post({ pairs, limits: { pair: 3 } });
    expect(unknown.status).toBe(400);
    expect(fake.requests).toHaveLength(0);
  });

  test('a generator that fails and a judge that fails are error answers with their codes, never a rubric', async ({ closeAfter, connectJudge }) => {
    const brokenWriter = await setup({ closeAfter, connectJudge }, generatorAndJudge(() => ({ status: 400, body: { error: { message: 'this writer is broken' } } })));
    const noRubric = await brokenWriter.post({ pairs });
    expect(noRubric.body.rubric).toBeUndefined();
    expect(noRubric.status).toBeGreaterThanOrEqual(400);
    expect(noRubric.body.error).toMatchObject({ code: 'JUDGE_UNPARSEABLE', message: expect.stringContaining('this writer is broken') });
    expect(noRubric.body.error.message).toContain('no prompt rubric to distill from');

    const brokenJudge: FakeJudgeScript = (request) => (request.criteria.length > 0 ? { status: 400, body: { error: { message: 'this judge is broken' } } } : proposing(request));
    const failedJudge = await (await setup({ closeAfter, connectJudge }, brokenJudge)).post({ pairs });
    expect(failedJudge.body.rubric).toBeUndefined();
    expect(failedJudge.status).toBe(422);
    expect(failedJudge.body.error).toMatchObject({ code: 'RUBRIC_NOT_DISTILLED', message: expect.stringMatching(/; [1-9]\d* verdicts on the labelled pairs failed/) });
  });
});
