import { describe, expect, it } from 'vitest';
import { RubricateError } from '../errors.js';
import { ifevalMetrics, instructionIdOf } from './ifeval-metrics.js';

describe('IFEval metrics', () => {
  it('computes prompt-level and pooled instruction-level accuracy with breakdowns', () => {
    const metrics = ifevalMetrics([
      { instructionIds: ['punctuation:no_comma', 'keywords:existence'], followed: [true, true] },
      { instructionIds: ['punctuation:no_comma', 'keywords:existence#2', 'keywords:frequency'], followed: [false, true, true] },
      { instructionIds: ['startend:quotation'], followed: [false] },
    ]);
    expect(metrics.prompt_level_accuracy).toBeCloseTo(1 / 3, 12);
    expect(metrics.instruction_level_accuracy).toBeCloseTo(4 / 6, 12);
    expect(metrics.prompts).toEqual({ correct: 1, total: 3, accuracy: 1 / 3 });
    expect(metrics.per_instruction['keywords:existence']).toEqual({ correct: 2, total: 2, accuracy: 1 });
    expect(metrics.per_instruction['punctuation:no_comma']).toEqual({ correct: 1, total: 2, accuracy: 0.5 });
    expect(metrics.per_group.keywords).toEqual({ correct: 3, total: 3, accuracy: 1 });
    expect(metrics.per_group.startend).toEqual({ correct: 0, total: 1, accuracy: 0 });
    expect(Object.keys(metrics.per_group)).toEqual(['keywords', 'punctuation', 'startend']);
  });

  it('strips the #n suffix the importer adds to repeated instruction ids', () => {
    expect(instructionIdOf('keywords:frequency#2')).toBe('keywords:frequency');
    expect(instructionIdOf('keywords:frequency')).toBe('keywords:frequency');
  });

  it('rejects empty or misaligned input', () => {
    expect(() => ifevalMetrics([])).toThrowError(RubricateError);
    expect(() => ifevalMetrics([{ instructionIds: ['a:b'], followed: [] }])).toThrowError(/differ in length/);
  });
});
