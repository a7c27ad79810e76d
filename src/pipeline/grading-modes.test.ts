import { describe, expect, it } from 'vitest';
import { gradingModeNames, type GradingPlan } from '../spec/run-spec.js';
import { createStrategy, gradingModeOf, gradingModes, planSettingFlag, unreadPlanSettings, type PlanSetting } from './grading-modes.js';

/** A value for every plan setting (what the value is matters only where a mode reads some values and not others). */
const given: Required<{ [Setting in PlanSetting]: unknown }> = {
  mode: 'holistic',
  groupBy: 'metadata.prompt_id',
  listwise: 'holistic',
  tournament: 'circular',
  orders: 2,
  criteriaPerCall: 4,
  verdict: 'probability',
  topLogprobs: 5,
  explanation: 'short',
  protocol: 'selene',
  template: 'Grade {{response}} on {{criterion}}.',
  likertLevels: 5,
  contextBudget: 4000,
  sampling: { temperature: 0 },
  abstain: 'skip',
  alignment: { hash: 'a'.repeat(64), examples: { criteria: {}, tags: {} }, rewordings: {} },
};

describe('the grading modes registry', () => {
  it('covers every mode and protocol', () => {
    expect(gradingModes.names()).toEqual(['per-criterion', 'batched', 'holistic', 'listwise', 'tournament', 'pairwise', 'rank-four', 'prometheus', 'r3', 'selene', 'lynx']);
    // Every --mode the schema and the flag take has its entry.
    for (const name of gradingModeNames) expect(gradingModes.has(name), name).toBe(true);
  });

  it('refuses, naming its flag, every setting a mode does not read, and nothing it reads', () => {
    for (const name of gradingModes.names()) {
      const reads = gradingModes.get(name).reads;
      for (const [setting, value] of Object.entries(given) as Array<[PlanSetting, unknown]>) {
        const read = reads[setting];
        const isRead = read === true || (Array.isArray(read) && (read as unknown[]).includes(value));
        const unread = unreadPlanSettings({ [setting]: value } as GradingPlan, name);
        if (isRead) {
          expect(unread, `${name} reads ${setting}`).toEqual([]);
        } else {
          expect(unread, `${name} does not read ${setting}`).toHaveLength(1);
          expect(unread[0].message, `${name}: ${setting}`).toContain(planSettingFlag(setting));
        }
      }
    }
  });

  it('refuses by name a setting no mode reads (a new setting before any mode reads it)', () => {
    const plan = { futureSetting: 1 } as unknown as GradingPlan;
    expect(unreadPlanSettings(plan, 'per-criterion')).toEqual([{ setting: 'futureSetting', flag: '--future-setting', message: '--future-setting does not apply to --mode per-criterion: leave it out' }]);
    expect(() => createStrategy(plan)).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', details: { field: 'future-setting' } }));
  });

  it('chooses the entry a plan grades with: a group mode, else the protocol, else the mode', () => {
    expect(gradingModeOf({})).toBe('per-criterion');
    expect(gradingModeOf({ criteriaPerCall: 'all' })).toBe('batched');
    expect(gradingModeOf({ protocol: 'prometheus' })).toBe('prometheus');
    expect(gradingModeOf({ protocol: 'native', mode: 'holistic' })).toBe('holistic');
    expect(gradingModeOf({ mode: 'listwise', protocol: 'r3' })).toBe('listwise');
  });

  it("fills the explanation length from the judge's own default, else full; a tournament has none", () => {
    const local = { capabilities: { images: false, defaults: { explanation: 'short' } } } as never;
    expect(gradingModes.get('per-criterion').defaults({}, local).explanation).toBe('short');
    expect(gradingModes.get('batched').defaults({ explanation: 'none' }, local).explanation).toBe('none');
    expect(gradingModes.get('per-criterion').defaults({}, undefined).explanation).toBe('full');
    expect(gradingModes.get('tournament').defaults({}, local)).toEqual({ sampling: { maxTokens: 512 } });
  });
});
