import { describe, expect, it } from 'vitest';
import { randomInteger, SeededGenerator, seededRandom } from './random.js';

describe('SeededGenerator', () => {
  it('fillIndices draws exactly what one randomInteger call per position draws, across calls', () => {
    const one = seededRandom(20_250_507);
    const expected = Array.from({ length: 3 * 37 }, () => randomInteger(one, 37));
    const generator = new SeededGenerator(20_250_507);
    const drawn: number[] = [];
    const target = new Int32Array(37);
    for (let round = 0; round < 3; round += 1) {
      generator.fillIndices(target, 37);
      drawn.push(...target);
    }
    expect(drawn).toEqual(expected);
    expect(new Set(drawn).size).toBeGreaterThan(20);
  });

  it('gives the same floats on every run for one seed, and other floats for another', () => {
    const first = Array.from({ length: 5 }, seededRandom(7));
    expect(Array.from({ length: 5 }, seededRandom(7))).toEqual(first);
    expect(Array.from({ length: 5 }, seededRandom(8))).not.toEqual(first);
    for (const value of first) expect(value >= 0 && value < 1).toBe(true);
  });
});
