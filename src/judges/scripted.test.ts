import { describe, expect, it } from 'vitest';
import { grade } from '../pipeline/grade.js';
import { Grader } from '../pipeline/grader.js';
import { normalizeItem } from '../rubric/normalize.js';
import { createJudge } from './registry.js';
import { scriptedLabel, scriptedReplyText, scriptedValue } from './scripted.js';

const item = {
  id: 'q1',
  prompt: 'Is 38°C a fever?',
  response: 'Yes, a mild one.',
  rubric: { criteria: Array.from({ length: 12 }, (_, index) => ({ text: `Criterion number ${index + 1}`, points: 1 })) },
};

describe('the scripted judge', () => {
  it('is labelled in provenance and in every explanation, and grades every criterion of every mode', async () => {
    for (const verdicts of ['met', 'unmet', 'mixed'] as const) {
      const judge = await createJudge({ model: `scripted:${verdicts}` });
      expect(judge.provenance).toMatchObject({ id: `scripted:${verdicts}`, model: 'scripted' });
      const { results } = await grade([item], { judge });
      const [result] = results;
      expect(result.status).toBe('ok');
      expect(result.judge?.id).toBe(`scripted:${verdicts}`);
      for (const criterion of result.criteria) expect(criterion.explanation).toBe(scriptedLabel);
      const met = result.criteria.map((criterion) => criterion.met);
      if (verdicts === 'met') expect(met).toEqual(Array(12).fill(true));
      if (verdicts === 'unmet') expect(met).toEqual(Array(12).fill(false));
      // Mixed decides each criterion by its own request: both verdicts occur, the same ones every run.
      if (verdicts === 'mixed') {
        expect(new Set(met)).toEqual(new Set([true, false]));
        expect((await grade([item], { judge })).results[0].criteria.map((criterion) => criterion.met)).toEqual(met);
      }
    }
  });

  it('`scripted` alone is mixed; an unknown kind is refused naming the known ones', async () => {
    expect((await createJudge({ model: 'scripted:' })).provenance.id).toBe('scripted:mixed');
    await expect(createJudge({ model: 'scripted:always' })).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining('scripted:met, scripted:unmet, scripted:mixed') });
  });

  it('fits the schema it is given: enums, bounds, nested objects, lists of at least their fewest items', () => {
    const schema = {
      type: 'object',
      properties: {
        winner: { enum: ['A', 'B', 'tie'] },
        score: { type: 'integer', minimum: 1, maximum: 10 },
        criteria: { type: 'array', minItems: 3, items: { type: 'object', properties: { text: { type: 'string' } } } },
        optional: { anyOf: [{ type: 'null' }, { type: 'boolean' }] },
      },
    };
    expect(scriptedValue(schema, 'met', 'seed')).toEqual({
      winner: 'tie',
      score: 10,
      criteria: [0, 1, 2].map((index) => ({ text: `${scriptedLabel} (criteria[${index}].text)` })),
      optional: true,
    });
    expect(scriptedValue(schema, 'unmet', 'seed')).toMatchObject({ winner: 'A', score: 1, optional: false });
  });

  it('answers a listwise group of any size with one entry per response shown (8 and 30: labels past Z)', async () => {
    const judge = await createJudge({ model: 'scripted:met' });
    const grader = new Grader({ judge, plan: { mode: 'listwise' }, calls: { retryBaseDelayMs: 1, maxAttempts: 1 } });
    for (const size of [8, 30]) {
      const items = Array.from({ length: size }, (_, index) => normalizeItem({ id: `g${size}/${index}`, prompt: 'Name some fruit.', response: `Answer ${index}.`, rubric: item.rubric }));
      const results = await grader.gradeGroup(items);
      expect(results.map((result) => [result.status, result.error?.message])).toEqual(Array(size).fill(['ok', undefined]));
      expect(results.every((result) => result.score === 1)).toBe(true);
    }
  });

  it("answers Prometheus' text protocol with its result line", () => {
    const absolute = { messages: [{ role: 'user' as const, content: 'The output format should look as follows: "(write a feedback for criteria) [RESULT] (an integer number between 1 and 5)"' }] };
    expect(scriptedReplyText(absolute, 'met')).toMatch(/\[RESULT\] 5$/);
    expect(scriptedReplyText(absolute, 'unmet')).toMatch(/\[RESULT\] 1$/);
    const relative = { messages: [{ role: 'user' as const, content: 'Feedback: (write a feedback for criteria) [RESULT] (Either "A" or "B")' }] };
    expect(scriptedReplyText(relative, 'met')).toMatch(/\[RESULT\] A$/);
  });
  it('answers in the format of every judge protocol, and gives certain token probabilities', async () => {
    for (const protocol of ['r3', 'selene', 'lynx'] as const) {
      for (const verdicts of ['met', 'unmet'] as const) {
        const { results } = await grade([{ ...item, reference: protocol === 'lynx' ? 'A fever is 38 °C or more.' : undefined }], { judge: await createJudge({ model: `scripted:${verdicts}` }), plan: { protocol } });
        expect(results[0].status, `${protocol} ${verdicts}`).toBe('ok');
        expect(results[0].criteria.every((criterion) => criterion.met === (verdicts === 'met')), `${protocol} ${verdicts}`).toBe(true);
      }
    }
    for (const verdicts of ['met', 'unmet'] as const) {
      const { results } = await grade([item], { judge: await createJudge({ model: `scripted:${verdicts}` }), plan: { verdict: 'probability' } });
      expect(results[0].criteria.map((criterion) => criterion.probability)).toEqual(Array(12).fill(verdicts === 'met' ? 1 : 0));
    }
  });
});
