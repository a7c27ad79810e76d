import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runFlagOf } from '../src/cli/run-spec-flags.js';
import { createScriptedJudge } from '../src/judges/scripted.js';
import { Comparer, type CompareOptions } from '../src/pipeline/compare.js';
import { planSettingFlag, type PlanSetting } from '../src/pipeline/grading-modes.js';
import { gradingPlanSchema } from '../src/spec/run-spec.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';

// What a grading mode does not read is refused by name, before anything is opened or called,
// in each command that grades: grade (the Grader), compare (the Comparer) and meta.
const items = join(projectRoot, 'examples/items.jsonl');
const pairs = join(projectRoot, 'examples/pairs/pairs.jsonl');

describe('plan settings the chosen grading mode does not read', () => {
  test('grade refuses one by its flag, with exit 2 and no output', async ({ tempDir }) => {
    const out = join(tempDir, 'results.jsonl');
    const result = await runCliInProcess(['grade', '--input', items, '--judge', 'scripted:met', '--mode', 'tournament', '--explanation', 'short', '--no-cache', '--out', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/CONFIG_INVALID.*--explanation does not apply to --mode tournament/);
    expect(existsSync(out)).toBe(false);
  });

  test('the Comparer (compare) refuses one by its flag; the CLI does not offer it at all', async ({ tempDir }) => {
    const judge = createScriptedJudge('met');
    // A library caller passing a rating setting: pairwise judging would drop it, so it is refused.
    const plan = { verdict: 'probability' } as unknown as CompareOptions['plan'];
    expect(() => new Comparer({ judge, plan })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining('--verdict does not apply to compare'), details: expect.objectContaining({ field: 'verdict' }) }));
    const cli = await runCliInProcess(['compare', '--input', pairs, '--judge', 'scripted:met', '--verdict', 'probability', '--out', join(tempDir, 'compare.jsonl')]);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/--verdict/);
  });

  test('meta refuses one by its flag on a pairwise set, with exit 2 and no report', async ({ tempDir }) => {
    const out = join(tempDir, 'meta.json');
    const result = await runCliInProcess(['meta', '--format', 'pairs', '--input', pairs, '--judge', 'scripted:met', '--explanation', 'short', '--no-cache', '--out', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--explanation does not apply to a pairwise set/);
    expect(existsSync(out)).toBe(false);
  });

  test("the registry's flag of every plan setting is the flag table's", () => {
    const settings = Object.keys(gradingPlanSchema.shape).filter((setting) => setting !== 'sampling') as PlanSetting[];
    expect(settings.length).toBeGreaterThan(10);
    for (const setting of settings) expect(planSettingFlag(setting), setting).toBe(runFlagOf(`plan.${setting}`));
  });
});
