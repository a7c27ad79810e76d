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

  it('adds the point after float keys at any depth, and never inside strings that quote such a key', () => {
    const explanation = 'the judge wrote {"reward":1,"score":2} and "score":3, with \\"reward\\":4';
    const value = { id: 'x', reward: 1, results: [{ reward: 0, score: -2, criteria: [{ points: 3, explanation }] }], count: 4, big: { score: 1e21 } };
    const text = stringifyWithFloatRewards(value);
    expect(text).toBe(`{"id":"x","reward":1.0,"results":[{"reward":0.0,"score":-2.0,"criteria":[{"points":3,"explanation":${JSON.stringify(explanation)}}]}],"count":4,"big":{"score":1e+21}}`);
    expect(JSON.parse(text)).toEqual(value);
  });

  it('gives what the key-by-key writer gives, for a custom set of keys with arrays under them', () => {
    expect(stringifyWithFloatRewards({ a: [1, 2.5], b: 3, c: { a: 4 } }, new Set(['a']))).toBe('{"a":[1.0,2.5],"b":3,"c":{"a":4.0}}');
    expect(stringifyWithFloatRewards({ 'a.b': 1, ab: 2 }, new Set(['a.b']))).toBe('{"a.b":1.0,"ab":2}');
  });
  it('writes answers with components under each result part by part, with floats only under float keys', () => {
    const result = { id: 'q1', reward: 1, status: 'ok', criteria: [{ id: 'c0', points: 2, met: true, explanation: '"score":5' }], usage: { calls: 8, cache_hits: 0 }, reward_components: { accuracy: 1, safety: null }, reward_weights: { accuracy: 2, safety: 1 }, at: new Date(0) };
    expect(stringifyWithFloatRewards(result)).toBe(
      '{"id":"q1","reward":1.0,"status":"ok","criteria":[{"id":"c0","points":2,"met":true,"explanation":"\\"score\\":5"}],"usage":{"calls":8,"cache_hits":0},"reward_components":{"accuracy":1.0,"safety":null},"reward_weights":{"accuracy":2.0,"safety":1.0},"at":"1970-01-01T00:00:00.000Z"}',
    );
    const batch = { results: [result, undefined, { reward: null, reward_components: {} }], fallbacks: 0, skipped: undefined };
    const text = stringifyWithFloatRewards(batch);
    expect(text).toBe(`{"results":[${stringifyWithFloatRewards(result)},null,{"reward":null,"reward_components":{}}],"fallbacks":0}`);
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(batch)));
  });
});

/** The plain definition: walk the value, numbers under a float key (at any depth below it) with a point. */
function referenceWriter(value: unknown, keys: ReadonlySet<string>, asFloat = false): string {
  if (typeof value === 'number') {
    if (!asFloat || !Number.isFinite(value)) return JSON.stringify(value);
    const text = JSON.stringify(value);
    return /^-?\d+$/.test(text) ? `${text}.0` : text;
  }
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return referenceWriter((value as { toJSON(): unknown }).toJSON(), keys, asFloat);
  if (Array.isArray(value)) return `[${value.map((entry) => (entry === undefined ? 'null' : referenceWriter(entry, keys, asFloat))).join(',')}]`;
  const parts = Object.entries(value)
    .filter(([, entry]) => entry !== undefined)
    .map(([key, entry]) => `${JSON.stringify(key)}:${referenceWriter(entry, keys, asFloat || keys.has(key))}`);
  return `{${parts.join(',')}}`;
}

describe('stringifyWithFloatRewards against the plain definition', () => {
  it('gives the same text on 3,000 random answers (nested float keys, quoted keys in strings, every number form)', () => {
    let state = 20261207;
    const random = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)];
    const keys = ['reward', 'rewards', 'score', 'extra_logs', 'reward_components', 'id', 'criteria', 'points', 'explanation', 'usage', 'a"b', 'reward\\'];
    const strings = ['', 'plain', '"reward":1', '{"score":2}', 'a\\"reward\\":3', 'back\\', '\u00e9\u{1F600}', '\u0000\n"', ']},"score":4'];
    const numbers = [0, 1, -1, 2.5, -0.25, 1e21, 1e-7, -0, 123456789012, Number.NaN, Number.POSITIVE_INFINITY, 42];
    const make = (depth: number): unknown => {
      const kind = random();
      if (depth > 3 || kind < 0.35) return pick(numbers);
      if (kind < 0.5) return pick(strings);
      if (kind < 0.55) return pick([true, false, null, undefined, new Date(0)]);
      if (kind < 0.75) return Array.from({ length: Math.floor(random() * 4) }, () => make(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 5) }, () => [pick(keys), make(depth + 1)]));
    };
    const floatKeySet = new Set(['reward', 'rewards', 'score', 'scores', 'advantages', 'raw_rewards', 'axes', 'terms', 'extra_logs', 'reward_failed', 'criteria_met_fraction', 'reward_components', 'reward_weights']);
    const customKeys = new Set(['a"b', 'reward\\', 'points']);
    for (let run = 0; run < 3000; run += 1) {
      const value = { [pick(keys)]: make(0), results: [make(1), make(1)] };
      expect(stringifyWithFloatRewards(value)).toBe(referenceWriter(value, floatKeySet));
      expect(stringifyWithFloatRewards(value, customKeys)).toBe(referenceWriter(value, customKeys));
    }
  });
});
