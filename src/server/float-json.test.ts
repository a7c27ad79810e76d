import { describe, expect, it } from 'vitest';
import { stringifyWithFloatRewards } from './float-json.js';

describe('stringifyWithFloatRewards', () => {
  it('writes rewards, scores, advantages and extra_logs as floats, other numbers as usual', () => {
    const text = stringifyWithFloatRewards({
      rewards: [1, 0, 0.5, -2],
      scores: [1, 0],
      extra_logs: { reward_failed: [0, 1], criteria_met_fraction: [1] },
      results: [{ reward: 0, criteria: [{ points: 3, met: true }], usage: { calls: 2 } }],
      advantages: [null, 0],
      fallbacks: 0,
    });
    expect(text).toBe(
      '{"rewards":[1.0,0.0,0.5,-2.0],"scores":[1.0,0.0],"extra_logs":{"reward_failed":[0.0,1.0],"criteria_met_fraction":[1.0]},"results":[{"reward":0.0,"criteria":[{"points":3,"met":true}],"usage":{"calls":2}}],"advantages":[null,0.0],"fallbacks":0}',
    );
  });

  it('parses back to the same values, drops undefined fields and escapes strings as JSON.stringify does', () => {
    const value = { id: 'a"b\n\u0000', reward: 1e-7, nested: { score: 123456789012 }, skipped: undefined, list: [undefined, 'x'] };
    const text = stringifyWithFloatRewards(value);
    expect(JSON.parse(text)).toEqual({ id: 'a"b\n\u0000', reward: 1e-7, nested: { score: 123456789012 }, list: [null, 'x'] });
    expect(text).toContain('"score":123456789012.0');
    expect(text).toContain('"reward":1e-7');
  });

  it('writes non-finite numbers as null, like JSON.stringify', () => {
    expect(stringifyWithFloatRewards({ reward: Number.NaN, score: Number.POSITIVE_INFINITY })).toBe('{"reward":null,"score":null}');
  });
});
