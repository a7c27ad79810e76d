import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { simpleEvalsImporter } from '../formats/simple-evals.js';
import { toScoredItem } from '../results/results.js';
import { clippedRatio, normalizedRatio } from './points.js';
import { aggregate, getScoring, healthbenchScoring, normalizedScoring, weightedMeanScoring } from './registry.js';
import { toSimpleEvalsMetrics } from './simple-evals-format.js';
import type { ScoredCriterion, ScoredItem } from './types.js';
import { dataPath, haveData } from '../testing/data.js';

function criterion(points: number, met: boolean, tags: string[] = [], extra: Partial<ScoredCriterion> = {}): ScoredCriterion {
  return { id: `c${points}${met}${tags.join()}`, points, tags, status: 'ok', met, ...extra };
}

describe('point ratios', () => {
  const criteria = [criterion(10, true), criterion(5, false), criterion(-4, true), criterion(-2, false)];
  it('HealthBench: Σ met points ÷ Σ positive points (negatives subtract)', () => {
    expect(clippedRatio(criteria)).toBeCloseTo((10 - 4) / 15, 15);
    expect(clippedRatio([criterion(-3, true)])).toBeNull();
  });
  it('normalised: (achieved − Σ negative) ÷ (Σ positive − Σ negative)', () => {
    expect(normalizedRatio(criteria)).toBeCloseTo((6 + 6) / (15 + 6), 15);
  });
  it('uses fractional values (ordinal or probability) when present', () => {
    expect(clippedRatio([criterion(4, false, [], { value: 0.5 }), criterion(4, true)])).toBeCloseTo(0.75, 15);
  });
});

describe('HealthBench aggregation', () => {
  const items: ScoredItem[] = [
    { id: 'a', status: 'ok', tags: ['theme:x'], criteria: [criterion(10, true, ['axis:accuracy']), criterion(5, false, ['axis:completeness']), criterion(-5, true, ['axis:accuracy'])] },
    { id: 'b', status: 'ok', tags: ['theme:y'], criteria: [criterion(4, true, ['axis:accuracy']), criterion(-8, true, ['axis:completeness'])] },
    { id: 'c', status: 'error', criteria: [criterion(4, true)] },
    { id: 'd', status: 'invalid', criteria: [] },
  ];
  const metrics = aggregate(healthbenchScoring, items);

  it('scores items, clips the mean, and leaves errors out while counting them', () => {
    // a: (10 − 5) / 15 = 1/3; b: (4 − 8) / 4 = −1; mean −1/3 clipped to 0.
    expect(metrics.overall?.score).toBe(0);
    expect(metrics.overall?.n_samples).toBe(2);
    expect([metrics.n, metrics.n_ok, metrics.n_error, metrics.n_invalid]).toEqual([4, 2, 1, 1]);
  });

  it('rubric tags score over their criteria, only where they have positive points', () => {
    // accuracy: a (10 − 5)/10 = 0.5, b 4/4 = 1 → 0.75. completeness: a 0/5 = 0; b has no positive points → skipped.
    expect(metrics.by_tag['axis:accuracy']).toMatchObject({ score: 0.75, n_samples: 2 });
    expect(metrics.by_tag['axis:completeness']).toMatchObject({ score: 0, n_samples: 1 });
    expect(metrics.by_tag['theme:x']).toMatchObject({ score: 1 / 3, n_samples: 1 });
  });

  it('is reproducible: the same items give byte-identical metrics', () => {
    expect(JSON.stringify(aggregate(healthbenchScoring, items))).toBe(JSON.stringify(metrics));
  });

  it('weighted mean does not clip; other scorings are registered by name', () => {
    expect(aggregate(weightedMeanScoring, items).overall?.score).toBeCloseTo((1 / 3 - 1) / 2, 15);
    expect(getScoring('normalized')).toBe(normalizedScoring);
    expect(() => getScoring('nope')).toThrow(/unknown scoring/);
  });

  it('a gated item scores 0 whatever its other criteria say', () => {
    const gated: ScoredItem = { id: 'g', status: 'ok', gated: true, criteria: [criterion(3, false), { ...criterion(5, true), status: 'skipped', met: null }] };
    expect(healthbenchScoring.itemScore(gated)).toBe(0);
  });
});

const outputs = dataPath('healthbench/simple_evals_outputs');
const haveOutputs = haveData(outputs, 'simple-evals parity (src/scoring/scoring.test.ts)');
if (!haveOutputs) console.warn(`skipping simple-evals parity: ${outputs} not found`);

describe.skipIf(!haveOutputs)('simple-evals parity (real outputs)', () => {
  const files = haveOutputs ? readdirSync(outputs).filter((name) => name.endsWith('_allresults.json')) : [];
  it.each(files)('%s: score and every rubric-tag metric (value and n_samples) to 1e-9', async (name) => {
    const file = resolve(outputs, name);
    const aggregator = healthbenchScoring.createAggregator();
    for await (const entry of simpleEvalsImporter.read(file, {})) {
      expect(entry.kind).toBe('result');
      if (entry.kind === 'result') aggregator.add(toScoredItem(entry.record));
    }
    const flat = toSimpleEvalsMetrics(aggregator.finish());
    const reference = JSON.parse(readFileSync(file, 'utf8')) as { score: number; metrics: Record<string, number> };
    expect(Math.abs(flat.overall_score - reference.score)).toBeLessThan(1e-9);
    // Example tags are not in the per-example metadata, so only rubric tags (and overall) can be recomputed from this file alone.
    const exampleTagPrefixes = ['theme:', 'physician_agreed_category:'];
    let compared = 0;
    for (const [key, value] of Object.entries(reference.metrics)) {
      if (key.endsWith(':bootstrap_std')) continue;
      const base = key.replace(/:n_samples$/, '');
      if (exampleTagPrefixes.some((prefix) => base.startsWith(prefix))) continue;
      expect(flat[key], key).toBeDefined();
      expect(Math.abs(flat[key] - value), key).toBeLessThan(1e-9);
      compared += 1;
    }
    expect(compared).toBeGreaterThan(10);
    // And nothing extra: every rubric-tag metric we produce exists in the reference.
    for (const key of Object.keys(flat)) if (!key.endsWith(':bootstrap_std')) expect(reference.metrics[key], key).toBeDefined();
  });
});
