import { describe, expect, it } from 'vitest';
import { normalizeRubric } from '../rubric/normalize.js';
import { scaffoldDecay, scaffoldGroup, scaffoldGroupShare, scaffoldGuidance, scaffoldScheduleSchema } from './scaffolding.js';

const schedule = scaffoldScheduleSchema.parse({});
const rubric = normalizeRubric({ criteria: Array.from({ length: 10 }, (_, index) => ({ id: `c${index}`, text: `criterion ${index}`, points: index === 9 ? -4 : index + 1 })) });

describe('RuscaRL scaffolding', () => {
  it('decays by the paper’s sigmoid over training progress: 1 ÷ (1 + e^(125·(x − 0.2)))', () => {
    expect(schedule).toEqual({ start: 0.2, steepness: 125 });
    // Step 21 of 101 is progress 0.2: halfway.
    expect(scaffoldDecay(21, 101, schedule)).toBe(0.5);
    expect(scaffoldDecay(1, 101, schedule)).toBeCloseTo(1 / (1 + Math.exp(-25)), 15);
    expect(scaffoldDecay(31, 101, schedule)).toBeCloseTo(1 / (1 + Math.exp(12.5)), 15);
    expect(scaffoldDecay(101, 101, schedule)).toBeLessThan(1e-40);
    // Past the end is the end; one step in all keeps everything.
    expect(scaffoldDecay(500, 101, schedule)).toBe(scaffoldDecay(101, 101, schedule));
    expect(scaffoldDecay(1, 1, schedule)).toBe(1);
    expect(scaffoldDecay(11, 101, { start: 0.2, steepness: 10 })).toBeCloseTo(1 / (1 + Math.exp(-1)), 15);
  });

  it('shares within a group linearly: the first rollout sees everything, the last nothing', () => {
    expect(Array.from({ length: 5 }, (_, index) => scaffoldGroupShare(index, 5))).toEqual([1, 0.75, 0.5, 0.25, 0]);
    expect(scaffoldGroupShare(0, 1)).toBe(1);
  });

  it('shows round(K · ratio) criteria, halves to even as Python rounds, in rubric order, to the prompt’s system message', () => {
    const prompt = [{ role: 'user', content: 'My child has a fever.' }];
    const { rollouts } = scaffoldGroup({ prompt, rubric, step: 1, totalSteps: 1, groupSize: 5, schedule, seed: 0 });
    // 10 × [1, 0.75, 0.5, 0.25, 0] = 10, 7.5, 5, 2.5, 0 → 10, 8, 5, 2, 0.
    expect(rollouts.map((rollout) => rollout.shown.length)).toEqual([10, 8, 5, 2, 0]);
    expect(rollouts[1].shown).toEqual([...rollouts[1].shown].sort((left, right) => Number(left.slice(1)) - Number(right.slice(1))));
    expect(rollouts[4].prompt).toBe(prompt);
    expect(rollouts[0].prompt).toEqual([{ role: 'system', content: scaffoldGuidance(rubric.criteria) }, ...prompt]);
    expect(rollouts[0].prompt[0].content).toContain('- criterion 0 (1 points)');
    expect(rollouts[0].prompt[0].content).toContain('Do not do these:\n- criterion 9 (costs 4 points)');
    // A system message of the prompt keeps its text, the guidance after it.
    const withSystem = scaffoldGroup({ prompt: [{ role: 'system', content: 'Be brief.' }, ...prompt], rubric, step: 1, totalSteps: 1, groupSize: 1, schedule, seed: 0 });
    expect(withSystem.rollouts[0].prompt[0].content.startsWith('Be brief.\n\nYour answer to this request will be assessed')).toBe(true);
    expect(withSystem.rollouts[0].prompt).toHaveLength(2);
  });

  it('samples the criteria shown by a seed, the step and the rollout: the same request, the same prompts', () => {
    const request = { prompt: [{ role: 'user', content: 'q' }], rubric, step: 3, totalSteps: 1, groupSize: 3, schedule, seed: 0 };
    expect(scaffoldGroup(request)).toEqual(scaffoldGroup(request));
    const shown = (seed: number, step = 3) => scaffoldGroup({ ...request, seed, step }).rollouts[1].shown;
    const samples = new Set([0, 1, 2, 3, 4].map((seed) => shown(seed).join(',')));
    expect(samples.size).toBeGreaterThan(1);
  });
});
