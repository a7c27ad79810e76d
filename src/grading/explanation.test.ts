import { describe, expect, it } from 'vitest';
import { normalizeItem } from '../rubric/normalize.js';
import { explanationVersion, withExplanationRule, withoutExplanation } from './explanation.js';
import { batchedTemplate, perCriterionTemplate } from './prompts.js';
import { createBatchedStrategy, createPerCriterionStrategy } from './strategies.js';
import { readVerdict } from './verdicts.js';

const item = normalizeItem({
  id: 'q1',
  prompt: 'Is 38°C a fever?',
  response: 'Yes, a mild one.',
  rubric: { criteria: [{ text: 'States that 38°C is a low-grade fever', points: 5 }, { text: 'Recommends antibiotics', points: -6 }] },
});
const sampling = { temperature: 0, maxTokens: 256 };

describe('explanation length', () => {
  it('rewrites only the reply-format sentence of each template', () => {
    for (const [template, kind] of [
      [perCriterionTemplate.binary, 'binary'],
      [perCriterionTemplate.ordinal, 'ordinal'],
      [batchedTemplate.instructions, 'batched'],
    ] as const) {
      expect(withExplanationRule(template, kind, 'full')).toBe(template);
      const none = withExplanationRule(template, kind, 'none');
      const short = withExplanationRule(template, kind, 'short');
      const rulesStart = template.lastIndexOf('Reply with a JSON object and nothing else');
      // Everything before the reply rule (instructions, grading rules) is unchanged.
      expect(none.slice(0, rulesStart)).toBe(template.slice(0, rulesStart));
      expect(short.slice(0, rulesStart)).toBe(template.slice(0, rulesStart));
      expect(none.slice(rulesStart)).not.toMatch(/explanation/);
      expect(short.slice(rulesStart)).toMatch(/one short sentence/);
    }
    expect(() => withExplanationRule('no reply rule here', 'binary', 'none')).toThrow(/no reply-format sentence/);
  });

  it('per-criterion: no explanation field in the schema, its own template version and cache key', () => {
    const full = createPerCriterionStrategy({ sampling }).plan(item, item.rubric.criteria);
    const none = createPerCriterionStrategy({ sampling, explanation: 'none' }).plan(item, item.rubric.criteria);
    expect(Object.keys((none[0].request.output?.schema as { properties: object }).properties)).toEqual(['criteria_met']);
    expect((none[0].request.output?.schema as { required: string[] }).required).toEqual(['criteria_met']);
    expect(Object.keys((full[0].request.output?.schema as { properties: object }).properties)).toEqual(['explanation', 'criteria_met']);
    expect(none[0].templateVersion).toBe(explanationVersion(perCriterionTemplate.version, 'none'));
    expect(none[0].templateVersion).not.toBe(full[0].templateVersion);
    expect(none[0].keyMaterial).not.toBe(full[0].keyMaterial);
    // A reply without an explanation is a verdict with no explanation, never an error.
    const decision = none[0].decide({ text: '{"criteria_met": true}', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 } });
    expect(decision.errors.size).toBe(0);
    expect(decision.verdicts.get(item.rubric.criteria[0].id)).toMatchObject({ met: true, explanation: undefined });
  });

  it('batched: every entry of the schema loses its explanation with none, keeps it with short', () => {
    const [none] = createBatchedStrategy({ sampling, criteriaPerCall: Number.POSITIVE_INFINITY, explanation: 'none' }).plan(item, item.rubric.criteria);
    const verdicts = (none.request.output?.schema as { properties: { verdicts: { properties: Record<string, { properties: object }> } } }).properties.verdicts.properties;
    for (const entry of Object.values(verdicts)) expect(Object.keys(entry.properties)).toEqual(['criteria_met']);
    const [short] = createBatchedStrategy({ sampling, criteriaPerCall: Number.POSITIVE_INFINITY, explanation: 'short' }).plan(item, item.rubric.criteria);
    expect(short.request.messages[0].content).toMatch(/one short sentence/);
    expect(short.templateVersion).toBe(`${batchedTemplate.version}+explanation-short`);
  });

  it('withoutExplanation leaves the schema it was given unchanged', () => {
    const schema = { type: 'object', properties: { explanation: { type: 'string' }, choice: { type: 'string', enum: ['a', 'b'] } }, required: ['explanation', 'choice'] };
    expect(withoutExplanation(schema)).toEqual({ type: 'object', properties: { choice: { type: 'string', enum: ['a', 'b'] } }, required: ['choice'] });
    expect(Object.keys(schema.properties)).toEqual(['explanation', 'choice']);
    expect(readVerdict(item.rubric.criteria[0], { criteria_met: false })).toMatchObject({ met: false });
  });
});
