import { describe, expect, it } from 'vitest';
import { suggestedSequences } from './local-judge-benchmark.js';

const speed = (width: number, tokensPerSecond: number) => ({ width, tokensPerSecond, stepSeconds: width / tokensPerSecond });

describe('the batch width bench-local suggests', () => {
  it('is the fewest sequences within 10% of the best decode throughput', () => {
    expect(suggestedSequences([speed(1, 12), speed(2, 20), speed(4, 29), speed(8, 31)])).toBe(4);
    expect(suggestedSequences([speed(1, 30), speed(2, 31), speed(4, 25)])).toBe(1);
    expect(suggestedSequences([speed(1, 10), speed(4, 40)])).toBe(4);
  });
});
