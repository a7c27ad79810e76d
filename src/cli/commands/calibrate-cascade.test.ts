/**
 * The cascade calibration on the example fixture (examples/cascade): ten calibration and ten
 * held-out items with the same P(met) values; the cheap judge is wrong exactly on P(met) 0.42,
 * 0.48, 0.55 and 0.62, the strong judge on 0.05. At a target of 100% agreement the only band that
 * fixes every cheap mistake with the fewest escalations is [0.42, 0.62] (escalating 0.05 would
 * add a strong mistake). Held out: cheap 6/10, strong 9/10, cascade 10/10 with 4 escalations.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { chooseBand, type CalibrationUnit } from '../../meta/cascade-calibration.js';
import { test } from '../../testing/vitest-fixtures.js';
import { runCliCaptured } from '../in-process.js';

const fixture = (name: string) => join(import.meta.dirname, '../../../examples/cascade', `${name}.jsonl`);

describe('calibrate-cascade', () => {
  test('picks the band the fixture makes optimal and reports held-out accuracy and cost against the strong judge alone', async ({ tempDir }) => {
    const out = join(tempDir, 'band.json');
    const result = await runCliCaptured(['calibrate-cascade', '--cheap', fixture('cheap'), '--strong', fixture('strong'), '--labels', fixture('labels'), '--target-agreement', '1', '--out', out]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.band).toEqual([0.42, 0.62]);
    expect(report.target_met).toBe(true);
    expect(report.split).toEqual({ seed: 0, holdout: 0.5, calibration: 10, held_out: 10 });
    expect(report.held_out).toEqual({
      criteria: 10,
      escalated: 4,
      escalation_rate: 0.4,
      accuracy: { cheap_alone: 0.6, strong_alone: 0.9, cascade: 1 },
      calls: { cheap_alone: 10, strong_alone: 10, cascade: 14 },
      // Per criterion: gpt-4.1-mini 1,000 × $0.4 + 100 × $1.6 per 1M = $0.00056; gpt-4.1 1,000 × $2 + 100 × $8 = $0.0028.
      cost_usd: { cheap_alone: 0.0056, strong_alone: 0.028, cascade: 0.0168 },
    });
    expect(result.stderr).toMatch(/band \[0\.42, 0\.62\]: 100\.0% agreement on 10 calibration criteria; held out \(10\): cascade 100\.0%, strong alone 90\.0%, cheap alone 60\.0%; 4 escalated \(40\.0%\)/);
  });

  test('a target lower than what the cheap judge reaches escalates nothing; one no band reaches is reported as missed', async () => {
    const units: CalibrationUnit[] = [0.1, 0.45, 0.9].map((probability, index) => ({ item: `i${index}`, criterion: 'c', probability, cheapMet: probability >= 0.5, strongMet: index !== 1, label: index !== 1 ? probability >= 0.5 : true, cheapCalls: 1, cheapCost: null, cheapTokens: { input: 0, output: 0 } }));
    // Cheap is right on 0.1 and 0.9 and wrong on 0.45, where the strong judge is wrong too.
    expect(chooseBand(units, 0.6)).toMatchObject({ band: null, escalations: 0, targetMet: true });
    expect(chooseBand(units, 1)).toMatchObject({ targetMet: false, agreement: 2 / 3, escalations: 0 });
  });

  test('--dry-run estimates escalation and cost from the cheap results alone, writing nothing', async () => {
    const result = await runCliCaptured(['calibrate-cascade', '--cheap', fixture('cheap'), '--strong-model', 'gpt-4.1', '--dry-run']);
    expect(result.code, result.stderr).toBe(0);
    const estimate = JSON.parse(result.stdout);
    const narrow = estimate.estimates[0];
    // [0.4, 0.6] holds 0.42, 0.48 and 0.55 on both halves: 6 of 20.
    expect(narrow).toMatchObject({ band: [0.4, 0.6], escalated: 6, escalation_rate: 0.3, calls: { strong_alone: 20, cascade: 26 }, cost_usd: { strong_alone: 0.056, cascade: 0.028 } });
  });
});
