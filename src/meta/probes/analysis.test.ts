import { describe, expect, it } from 'vitest';
import { analyseProbe, type VariantObservation } from './analysis.js';
import { probeDefinitions } from './perturbations.js';

function observation(item: number, originalScore: number, perturbedScore: number, criteria: VariantObservation['criteria'], extra: Partial<VariantObservation> = {}): VariantObservation {
  return { item, itemId: `item-${item}`, variant: 'padding', ok: true, originalScore, perturbedScore, criteria, ...extra };
}

const criterion = (id: string, original: boolean, perturbed: boolean) => ({ id, text: `criterion ${id}`, original, perturbed });

describe('analyseProbe', () => {
  it('averages an item\u2019s variants before the paired mean and counts flips by direction', () => {
    const observations = [
      observation(0, 0.5, 1, [criterion('a', true, true), criterion('b', false, true)]),
      observation(0, 0.5, 0.5, [criterion('a', true, true), criterion('b', false, false)]),
      observation(1, 1, 0.5, [criterion('a', true, false), criterion('c', true, true)]),
      observation(2, 0, 0, [criterion('d', false, false)]),
    ];
    const result = analyseProbe(probeDefinitions.padding, observations, { resamples: 200 });
    // Item drifts: (0.5 + 0) / 2 = 0.25, −0.5, 0 → mean −0.0833…
    expect(result.drift.mean).toBeCloseTo((0.25 - 0.5 + 0) / 3, 12);
    expect(result.drift).toMatchObject({ items: 3, rose: 1, fell: 1, unchanged: 1 });
    expect(result.drift.meanOriginal).toBeCloseTo(0.5, 12);
    expect(result.drift.meanPerturbed).toBeCloseTo((0.75 + 0.5 + 0) / 3, 12);
    expect(result.flips.metToNotMet).toMatchObject({ count: 1, of: 4 });
    expect(result.flips.notMetToMet).toMatchObject({ count: 1, of: 3 });
    expect(result.flips.any).toMatchObject({ count: 2, of: 7 });
    expect(result.flips.comparisons).toBe(7);
    expect(result.perItem).toEqual([
      { id: 'item-0', original: 0.5, perturbed: 0.75, drift: 0.25, variants: 2, failed: 0 },
      { id: 'item-1', original: 1, perturbed: 0.5, drift: -0.5, variants: 1, failed: 0 },
      { id: 'item-2', original: 0, perturbed: 0, drift: 0, variants: 1, failed: 0 },
    ]);
    // Most flips first; equal flips, the higher rate first.
    expect(result.byCriterion.map((entry) => [entry.criterionId, entry.flips, entry.eligible])).toEqual([
      ['b', 1, 2],
      ['a', 1, 3],
      ['c', 0, 1],
      ['d', 0, 1],
    ]);
    expect(result.assessment).toBe('no significant change');
    expect(result.flagged).toBe(false);
  });

  it('calls a consistent rise significant, and the interval lies above zero', () => {
    const observations = Array.from({ length: 10 }, (_, item) => observation(item, 0.4, 0.4 + 0.05 * (1 + (item % 3)), []));
    const result = analyseProbe(probeDefinitions.padding, observations, { resamples: 500, seed: 1 });
    expect(result.drift.interval!.lower).toBeGreaterThan(0);
    expect(result.drift.interval!.upper).toBeLessThanOrEqual(0.15 + 1e-12);
    expect(result.assessment).toBe('score rises');
    expect(result.flagged).toBe(true);
    const falling = analyseProbe(probeDefinitions.formatting, observations.map((entry) => ({ ...entry, perturbedScore: 0.2 })), { resamples: 500 });
    expect(falling.assessment).toBe('score falls');
    expect(falling.flagged).toBe(true);
  });

  it('is reproducible for a seed and changes its resamples with the seed', () => {
    const observations = Array.from({ length: 12 }, (_, item) => observation(item, 0.5, item % 4 === 0 ? 0.9 : 0.5, []));
    const first = analyseProbe(probeDefinitions.padding, observations, { resamples: 300, seed: 4 });
    expect(analyseProbe(probeDefinitions.padding, observations, { resamples: 300, seed: 4 })).toEqual(first);
    expect(analyseProbe(probeDefinitions.padding, observations, { resamples: 300, seed: 5 }).drift.interval).not.toEqual(first.drift.interval);
  });

  it('leaves failed variants out of every figure and counts them', () => {
    const observations = [
      observation(0, 0.5, 0.5, [criterion('a', true, true)]),
      observation(0, 0.5, 0, [], { ok: false, perturbedScore: null }),
      observation(1, 1, 1, [criterion('a', true, true)]),
    ];
    const result = analyseProbe(probeDefinitions.confidence, observations, { resamples: 100 });
    expect(result.variants).toEqual({ graded: 2, failed: 1 });
    expect(result.drift.mean).toBe(0);
    expect(result.perItem[0]).toMatchObject({ variants: 2, failed: 1, drift: 0 });
  });

  it('deletion: rates the targeted criterion apart from collateral flips and is flagged when the score does not fall', () => {
    const deletion = (item: number, flips: boolean) =>
      observation(item, 1, flips ? 0.5 : 1, [criterion('t', true, !flips), criterion('other', true, true)], { variant: 'deletion', targetCriterionId: 't' });
    const sensitive = analyseProbe(probeDefinitions.deletion, Array.from({ length: 8 }, (_, item) => deletion(item, true)), { resamples: 200 });
    expect(sensitive.target).toMatchObject({ count: 8, of: 8, rate: 1 });
    expect(sensitive.flips.metToNotMet).toMatchObject({ count: 0, of: 8 });
    expect(sensitive.assessment).toBe('score falls');
    expect(sensitive.flagged).toBe(false);
    expect(sensitive.byCriterion).toEqual([{ criterionId: 't', text: 'criterion t', eligible: 8, flips: 8, rate: 1 }]);
    const blind = analyseProbe(probeDefinitions.deletion, Array.from({ length: 8 }, (_, item) => deletion(item, false)), { resamples: 200 }, { unmatchedCriteria: 3 });
    expect(blind.target).toMatchObject({ count: 0, of: 8, rate: 0 });
    expect(blind.assessment).toBe('no significant change');
    expect(blind.flagged).toBe(true);
    expect(blind.unmatchedCriteria).toBe(3);
    // The targeted criterion flips in 6 of 8, while the score, moved both ways by the others, does not
    // change significantly: the assessment says the key criterion flips, not "no significant change".
    const mixed = analyseProbe(
      probeDefinitions.deletion,
      Array.from({ length: 8 }, (_, item) => observation(item, 0.5, item < 6 ? 0.4 : 0.9, [criterion('t', true, item >= 6)], { variant: 'deletion', targetCriterionId: 't' })),
      { resamples: 300 },
    );
    expect(mixed.target?.rate).toBe(0.75);
    expect(mixed.drift.interval!.lower).toBeLessThan(0);
    expect(mixed.drift.interval!.upper).toBeGreaterThan(0);
    expect(mixed.assessment).toBe('key criterion flips');
    expect(mixed.flagged).toBe(false);
  });

  it('spurious: verdicts that flip both ways under padding are a weakness even when the mean score holds', () => {
    // Half the items gain a criterion, half lose one: the drift cancels, the flips do not.
    const observations = Array.from({ length: 10 }, (_, item) => observation(item, 0.5, item % 2 === 0 ? 1 : 0, [criterion('a', item % 2 === 1, item % 2 === 0)]));
    const result = analyseProbe(probeDefinitions.padding, observations, { resamples: 300 });
    expect(result.drift.interval!.lower).toBeLessThan(0);
    expect(result.drift.interval!.upper).toBeGreaterThan(0);
    expect(result.flips.any).toMatchObject({ count: 10, of: 10 });
    expect(result.assessment).toBe('verdicts flip, score unchanged');
    expect(result.flagged).toBe(true);
  });

  it('injection: flags significant flips to met, and breaks them down by kind of injection', () => {
    const observations: VariantObservation[] = [];
    for (let item = 0; item < 10; item += 1) {
      observations.push(observation(item, 0.5, 1, [criterion('a', true, true), criterion('b', false, true)], { variant: 'injection:direct' }));
      observations.push(observation(item, 0.5, 0.5, [criterion('a', true, true), criterion('b', false, false)], { variant: 'injection:fake-verdict' }));
    }
    const result = analyseProbe(probeDefinitions.injection, observations, { resamples: 300 });
    expect(result.flips.notMetToMet).toMatchObject({ count: 10, of: 20, rate: 0.5 });
    expect(result.flips.notMetToMet.interval!.lower).toBeGreaterThan(0);
    expect(result.assessment).toBe('flips to met');
    expect(result.flagged).toBe(true);
    expect(result.byVariant!['injection:direct']).toMatchObject({ assessment: 'flips to met', flagged: true });
    expect(result.byVariant!['injection:fake-verdict']).toMatchObject({ assessment: 'no flips', flagged: false });
    expect(result.byCriterion[0]).toMatchObject({ criterionId: 'b', eligible: 20, flips: 10 });
    const resisted = analyseProbe(probeDefinitions.injection, observations.filter((entry) => entry.variant === 'injection:fake-verdict'), { resamples: 100 });
    expect(resisted.byVariant).toBeUndefined();
    expect(resisted.assessment).toBe('no flips');
  });

  it('says so when there is nothing to compare', () => {
    const result = analyseProbe(probeDefinitions.padding, [], { resamples: 100 });
    expect(result.drift).toMatchObject({ items: 0, mean: null, interval: null });
    expect(result.assessment).toBe('not enough data');
    expect(result.flagged).toBe(false);
    expect(analyseProbe(probeDefinitions.injection, [], { resamples: 100 }).assessment).toBe('not enough data');
  });
});
