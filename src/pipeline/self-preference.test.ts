/**
 * The self-preference guard: model names compared across providers, dates, paths and
 * quantisations; a related judge warned about (graded, recorded) or refused (not asked); the run
 * told its model under test refused at start; `compare` looking at both responses' models.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { runCliCaptured } from '../cli/in-process.js';
import { modelRelation } from '../judges/model-family.js';
import { normalizeItem } from '../rubric/normalize.js';
import { binaryVerdict } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { Comparer } from './compare.js';
import { Grader } from './grader.js';

const answered = (model: string) => normalizeItem({ id: `by-${model}`, prompt: 'Is 38°C a fever?', response: 'Yes.', rubric: { criteria: [{ text: 'Says yes' }] }, metadata: { model } });

describe('model relations', () => {
  test.for([
    ['openai:gpt-4o', 'gpt-4o-2024-08-06', 'same-model'],
    ['gpt-4o', 'openai/gpt-4o', 'same-model'],
    ['gguf:/models/Qwen2.5-7B-Instruct-Q4_K_M.gguf', 'Qwen2.5-7B-Instruct', 'same-model'],
    ['gpt-4.1', 'gpt-4o-mini', 'same-family'],
    ['o3-mini', 'gpt-4o', 'same-family'],
    ['claude-sonnet-4-5', 'anthropic/claude-3-5-haiku-20241022', 'same-family'],
    ['gemini-2.5-flash', 'models/gemma-3-27b-it', 'same-family'],
    ['gemini-2.5-flash', 'gpt-4o', 'unrelated'],
    ['meta-llama/Llama-3.1-8B-Instruct', 'Qwen/Qwen2.5-7B', 'unrelated'],
  ] as const)('%s and %s: %s', ([judge, tested, relation]) => {
    expect(modelRelation(judge, tested)).toBe(relation);
  });
});

describe('the guard in grade and compare', () => {
  test('warn: an item answered by the judge\'s family is graded and says so; an unrelated one says nothing', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: binaryVerdict(true) }), { model: 'gpt-4.1' });
    const grader = new Grader({ judge });
    const related = await grader.gradeItem(answered('gpt-4o-mini'));
    expect(related.status).toBe('ok');
    expect(related.self_preference).toEqual({ model_under_test: 'gpt-4o-mini', judge: 'openai:gpt-4.1', relation: 'same-family', policy: 'warn' });
    expect((await grader.gradeItem(answered('claude-sonnet-4-5'))).self_preference).toBeUndefined();
    expect(grader.selfPreference?.counts).toEqual({ flagged: 1, refused: 0 });
    expect(fake.requests).toHaveLength(2);
  });

  test('refuse: such an item is not sent and is an error; told the model under test, the run is refused at start', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: binaryVerdict(true) }), { model: 'gpt-4o' });
    const grader = new Grader({ judge, guard: { selfPreference: 'refuse' } });
    const refused = await grader.gradeItem(answered('gpt-4o-2024-08-06'));
    expect(refused).toMatchObject({ status: 'error', score: null, criteria: [{ status: 'error', error: { code: 'SELF_PREFERENCE_REFUSED' } }], self_preference: { relation: 'same-model', policy: 'refuse' } });
    expect(fake.requests).toHaveLength(0);
    expect(() => new Grader({ judge, guard: { modelUnderTest: 'gpt-4o-mini', selfPreference: 'refuse' } })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    // Told an unrelated model under test: every line records both models.
    const told = await new Grader({ judge, guard: { modelUnderTest: 'claude-sonnet-4-5', selfPreference: 'refuse' } }).gradeItem(answered('ignored'));
    expect(told.self_preference).toEqual({ model_under_test: 'claude-sonnet-4-5', judge: 'openai:gpt-4o', relation: 'unrelated', policy: 'refuse' });
    expect(told.status).toBe('ok');
  });

  test('compare looks at the models of both responses', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: { explanation: 'x', winner: '1' } }), { model: 'claude-sonnet-4-5' });
    const pair = { id: 'p', prompt: [{ role: 'user', content: 'Hi' }], responseA: 'Hello!', responseB: 'Hey.', metadata: { model_a: 'gpt-4o', model_b: 'claude-3-5-haiku' } };
    const warned = await new Comparer({ judge }).comparePair(pair);
    expect(warned.self_preference).toEqual({ model_under_test: 'claude-3-5-haiku', judge: 'openai:claude-sonnet-4-5', relation: 'same-family', policy: 'warn' });
    const before = fake.requests.length;
    const refused = await new Comparer({ judge, guard: { selfPreference: 'refuse' } }).comparePair(pair);
    expect(refused.status).toBe('error');
    expect(refused.error?.code).toBe('SELF_PREFERENCE_REFUSED');
    expect(fake.requests).toHaveLength(before);
  });

  test('the CLI warns on stderr, and refuses a run whose judge is its model under test with exit 2', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(() => ({ content: binaryVerdict(true) }));
    const input = join(tempDir, 'items.jsonl');
    writeFileSync(input, `${JSON.stringify({ id: 'a', prompt: 'p', response: 'r', rubric: { criteria: [{ text: 'c' }] }, metadata: { model: 'gpt-4o-mini' } })}\n`);
    const base = ['grade', '--input', input, '--out', join(tempDir, 'out.jsonl'), '--judge', 'openai:gpt-4o', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet'];
    const refused = await runCliCaptured([...base, '--model-under-test', 'gpt-4o', '--self-preference', 'refuse']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/the judge openai:gpt-4o is the model under test \(gpt-4o\)/);
    expect(fake.requests).toHaveLength(0);
    const warned = await runCliCaptured(base);
    expect(warned.code, warned.stderr).toBe(0);
    expect(warned.stderr).toMatch(/^warning: self-preference: 1 item\(s\) were answered by the judge's own model or family/m);
  });
});
