import { describe, expect, it } from 'vitest';
import { RubricateError } from '../errors.js';
import { computePairwiseMeta, judgeBenchOutcome, judgeBenchScore, llmbarKappa, type PairwiseMetaRecord } from './pairwise-metrics.js';

const quick = { resamples: 200 };

/** Five pairs covering agreement, disagreement, invalid verdicts and ties. */
const mixed: PairwiseMetaRecord[] = [
  { gold: 'A', original: 'A', swapped: 'A', source: 's1', category: 'c1' }, // both right
  { gold: 'B', original: 'A', swapped: 'B', source: 's1', category: 'c1' }, // position-dependent
  { gold: 'A', original: 'invalid', swapped: 'invalid', source: 's2', category: 'c1' }, // unparseable twice
  { gold: 'B', original: 'tie', swapped: 'B', source: 's2', category: 'c2' },
  { gold: 'A', original: 'B', swapped: 'B', source: 's2', category: 'c2' }, // both wrong
];

describe('computePairwiseMeta: hand-computed case', () => {
  const overall = computePairwiseMeta(mixed, quick).overall;

  it('counts accuracy per order, on average and in both orders', () => {
    expect(overall.pairs).toBe(5);
    expect(overall.swappedPairs).toBe(5);
    expect(overall.counts).toEqual({ correctOriginal: 1, correctSwapped: 3, correctBoth: 1, equal: 3 });
    expect(overall.accuracy.original).toBeCloseTo(0.2, 14);
    expect(overall.accuracy.swapped).toBeCloseTo(0.6, 14);
    expect(overall.accuracy.average).toBeCloseTo(0.4, 14);
    expect(overall.accuracy.both).toBeCloseTo(0.2, 14);
  });

  it('counts two invalid verdicts as positional agreement, as LLMBar does', () => {
    expect(overall.positionalAgreement).toBeCloseTo(0.6, 14);
  });

  it('computes JudgeBench\u2019s net-vote score and consistency counts', () => {
    expect(overall.judgeBench).toEqual({
      score: 0.4,
      percent: 40,
      correct: 2, // pairs 1 and 4
      incorrect: 1, // pair 5
      tie: 2, // pairs 2 (votes cancel) and 3 (no valid vote)
      allCorrect: 1,
      allIncorrect: 2,
      someCorrect: 2,
      inconsistent: 2,
      nulls: 1,
    });
  });

  it('counts verdicts per order', () => {
    expect(overall.verdicts.original).toEqual({ A: 2, B: 1, tie: 1, invalid: 1 });
    expect(overall.verdicts.swapped).toEqual({ A: 1, B: 3, tie: 0, invalid: 1 });
  });

  it('computes Cohen\u2019s κ of verdicts against gold', () => {
    // Original: agreement 1/5; gold A×3, B×2; verdicts A×2, B×1, tie×1, invalid×1.
    // Chance agreement = (3·2 + 2·1)/25 = 8/25 → κ = (5/25 − 8/25)/(17/25) = −3/17.
    expect(overall.kappa.original).toBeCloseTo(-3 / 17, 14);
    // Swapped: agreement 3/5; gold A×3, B×2; verdicts A×1, B×3, invalid×1 → chance (3 + 6)/25.
    expect(overall.kappa.swapped).toBeCloseTo((15 / 25 - 9 / 25) / (16 / 25), 14);
  });

  it('omits LLMBar κ unless asked', () => {
    expect(overall.llmbarKappa).toBeUndefined();
  });
});

describe('judgeBenchOutcome', () => {
  it.each([
    [{ gold: 'A', original: 'A', swapped: 'tie' }, 1],
    [{ gold: 'A', original: 'B', swapped: 'tie' }, -1],
    [{ gold: 'A', original: 'A', swapped: 'B' }, 0],
    [{ gold: 'B', original: 'invalid', swapped: 'B' }, 1],
    [{ gold: 'B', original: 'A' }, -1],
    [{ gold: 'tie', original: 'tie', swapped: 'A' }, 1],
  ] as Array<[PairwiseMetaRecord, number]>)('%j → %d', (record, expected) => {
    expect(judgeBenchOutcome(record)).toBe(expected);
  });
});

describe('llmbarKappa', () => {
  it('reproduces LLMBar\u2019s encoding (verdict 1 if output 1 else 0; gold 1 or 2)', () => {
    const records: PairwiseMetaRecord[] = [
      { gold: 'A', original: 'A', swapped: 'A' },
      { gold: 'B', original: 'A', swapped: 'B' },
      { gold: 'A', original: 'B', swapped: 'B' },
      { gold: 'B', original: 'B', swapped: 'invalid' },
    ];
    const kappa = llmbarKappa(records);
    // Original encoded [1,1,0,0] vs gold [1,2,1,2]: observed disagreement 3, expected 3 → 0.
    expect(kappa.original).toBeCloseTo(0, 14);
    // Swapped encoded [1,0,0,0] vs gold: observed 3, expected 3.5 → 1/7.
    expect(kappa.swapped).toBeCloseTo(1 / 7, 14);
    expect(kappa.average).toBeCloseTo(1 / 14, 14);
    // Between orders [1,1,0,0] vs [1,0,0,0]: observed 1, expected 2 → 0.5.
    expect(kappa.agreement).toBeCloseTo(0.5, 14);
  });

  it('is included when asked, and null parts propagate to the average', () => {
    const report = computePairwiseMeta([{ gold: 'A', original: 'A', swapped: 'A' }], { ...quick, llmbarKappa: true });
    expect(report.overall.llmbarKappa).toEqual({ original: null, swapped: null, average: null, agreement: null });
    expect(Object.keys(report.overall).at(-1)).toBe('intervals');
  });
});

describe('computePairwiseMeta: one order only, degenerate inputs', () => {
  it('leaves swapped-order figures null when no pair was judged swapped; JudgeBench falls back to one game', () => {
    const overall = computePairwiseMeta(
      [
        { gold: 'A', original: 'A' },
        { gold: 'B', original: 'A' },
        { gold: 'B', original: 'tie' },
        { gold: 'A', original: 'A' },
      ],
      quick,
    ).overall;
    expect(overall.swappedPairs).toBe(0);
    expect(overall.accuracy).toEqual({ original: 0.5, swapped: null, average: null, both: null });
    expect(overall.positionalAgreement).toBeNull();
    expect(overall.kappa.swapped).toBeNull();
    expect(overall.judgeBench.score).toBe(0.5);
    expect(overall.intervals.accuracyAverage).toBeNull();
    expect(overall.intervals.accuracyOriginal).not.toBeNull();
  });

  it('counts a missing swapped verdict as invalid when other pairs have one', () => {
    const overall = computePairwiseMeta([{ gold: 'A', original: 'A', swapped: 'A' }, { gold: 'A', original: 'A' }], quick).overall;
    expect(overall.swappedPairs).toBe(1);
    expect(overall.counts).toEqual({ correctOriginal: 2, correctSwapped: 1, correctBoth: 1, equal: 1 });
    expect(overall.verdicts.swapped.invalid).toBe(1);
  });

  it('handles a single pair', () => {
    const overall = computePairwiseMeta([{ gold: 'B', original: 'B', swapped: 'A' }], quick).overall;
    expect(overall.accuracy).toEqual({ original: 1, swapped: 0, average: 0.5, both: 0 });
    expect(overall.positionalAgreement).toBe(0);
    expect(overall.judgeBench.tie).toBe(1);
    expect(overall.intervals.accuracyAverage).toMatchObject({ lower: 0.5, upper: 0.5 });
  });

  it('handles no pairs', () => {
    const report = computePairwiseMeta([], quick);
    expect(report.overall.pairs).toBe(0);
    expect(report.overall.accuracy.original).toBeNull();
    expect(report.overall.judgeBench.score).toBeNull();
    expect(report.overall.kappa.original).toBeNull();
    expect(report.bySource).toEqual({});
    expect(judgeBenchScore([]).percent).toBeNull();
  });
});

describe('computePairwiseMeta: breakdowns and reproducibility', () => {
  it('breaks down by source and by category, sorted', () => {
    const report = computePairwiseMeta(mixed, quick);
    expect(Object.keys(report.bySource)).toEqual(['s1', 's2']);
    expect(report.bySource.s1).toMatchObject({ pairs: 2, counts: { correctOriginal: 1, correctSwapped: 2, correctBoth: 1, equal: 1 } });
    expect(report.bySource.s2.judgeBench).toMatchObject({ correct: 1, incorrect: 1, tie: 1 });
    expect(Object.keys(report.byCategory)).toEqual(['c1', 'c2']);
    expect(report.byCategory.c2.accuracy.swapped).toBe(0.5);
  });

  it('is deterministic for a seed and JSON-safe', () => {
    const many: PairwiseMetaRecord[] = Array.from({ length: 80 }, (_, index) => ({
      gold: index % 2 === 0 ? 'A' : 'B',
      original: index % 3 === 0 ? 'B' : 'A',
      swapped: index % 5 === 0 ? 'invalid' : index % 2 === 0 ? 'A' : 'B',
      source: `s${index % 4}`,
    }));
    const first = computePairwiseMeta(many, { seed: 5 });
    expect(computePairwiseMeta(many, { seed: 5 })).toEqual(first);
    expect(JSON.parse(JSON.stringify(first))).toEqual(first);
    expect(first.bootstrap).toEqual({ resamples: 1000, seed: 5, confidence: 0.95, unit: 'pair' });
    const average = first.overall.intervals.accuracyAverage!;
    expect(average.lower).toBeLessThanOrEqual(first.overall.accuracy.average!);
    expect(average.upper).toBeGreaterThanOrEqual(first.overall.accuracy.average!);
  });

  it('rejects malformed records with INPUT_INVALID naming the field', () => {
    const bad = [{ gold: 'A', original: 'A' }, { gold: 'C', original: 'A' }] as unknown as PairwiseMetaRecord[];
    expect(() => computePairwiseMeta(bad)).toThrow(RubricateError);
    try {
      computePairwiseMeta(bad);
    } catch (error) {
      expect((error as RubricateError).details.field).toBe('records[1].gold');
    }
    expect(() => computePairwiseMeta([{ gold: 'A', original: 'A', swapped: 'maybe' }] as unknown as PairwiseMetaRecord[])).toThrow(/swapped/);
  });
});
