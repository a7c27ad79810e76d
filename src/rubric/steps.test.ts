import { describe, expect, test } from 'vitest';
import { RubricateError } from '../errors.js';
import { normalizeTrajectory } from '../trajectory/trajectory.js';
import { normalizeItem, normalizeRubric } from './normalize.js';
import { itemAtStep, trajectoryStepSpans } from './steps.js';

const messages = [
  { role: 'user' as const, content: 'Find the capital.' },
  { role: 'assistant' as const, content: 'Searching.', tool_calls: [{ id: 'c1', type: 'function' as const, function: { name: 'search', arguments: '{}' } }] },
  { role: 'tool' as const, tool_call_id: 'c1', content: 'Paris.' },
  { role: 'assistant' as const, content: 'Paris.' },
];

function refusal(run: () => unknown): { message: string; field?: unknown } {
  try {
    run();
  } catch (error) {
    if (RubricateError.isInstance(error)) return { message: error.message, field: error.details.field };
    throw error;
  }
  throw new Error('not refused');
}

describe('process-reward steps', () => {
  test('a step is an assistant message with the tool results answering it; what comes before the first is context', () => {
    // Rendered steps: 1 user, 2 assistant text, 3 tool call, 4 tool result, 5 assistant text.
    expect(trajectoryStepSpans(normalizeTrajectory(messages))).toEqual([
      { start: 1, end: 3, firstRendered: 2, lastRendered: 4 },
      { start: 3, end: 4, firstRendered: 5, lastRendered: 5 },
    ]);
  });

  test('the item at a step: the trajectory cut after it, the criterion asked about it, no reference', () => {
    const item = normalizeItem({ id: 'a', prompt: 'q', response: messages, reference: 'Paris', rubric: { criteria: [{ id: 'u', text: 'Useful', scope: 'step' }] } });
    const spans = trajectoryStepSpans(item.trajectory!);
    const first = itemAtStep(item, 1, item.rubric.criteria, spans);
    expect(first.trajectory).toHaveLength(3);
    expect(first.reference).toBeUndefined();
    expect(first.rubric.criteria[0].text).toBe("Useful\n(Process step 1 of 2: judge only the trajectory's last assistant step, shown as steps 2–4, with the steps before it as context.)");
    expect(first.response).not.toContain('Paris.\n');
    expect(itemAtStep(item, 2, item.rubric.criteria, spans).rubric.criteria[0].text).toContain('shown as step 5,');
  });

  test('what cannot be graded by step is refused naming the field', () => {
    const criteria = [{ id: 'u', text: 'Useful', scope: 'step' }];
    expect(refusal(() => normalizeRubric({ criteria, gate: 'hard_rules' })).field).toBe('gate');
    expect(refusal(() => normalizeRubric({ criteria: [{ ...criteria[0], turn: 'every' }] })).field).toBe('criteria[0].turn');
    expect(refusal(() => normalizeRubric({ criteria: [{ id: 'x', text: 'Whole' }], step_aggregate: 'min' })).field).toBe('step_aggregate');
    expect(refusal(() => normalizeRubric({ criteria, step_aggregate: { rule: 'discounted', gamma: 1.5 } })).field).toBe('step_aggregate.gamma');
    expect(refusal(() => normalizeRubric({ criteria, step_aggregate: { rule: 'discounted' } })).field).toMatch(/^step_aggregate/);
    expect(normalizeRubric({ criteria, step_aggregate: { rule: 'discounted', gamma: 0.9 } }).stepAggregate).toEqual({ rule: 'discounted', gamma: 0.9 });
    expect(normalizeRubric({ criteria, step_aggregate: 'last' }).stepAggregate).toEqual({ rule: 'last' });
    expect(refusal(() => normalizeRubric({ criteria: [...criteria, { id: 'w', text: 'Whole', when: { criterion: 'u', verdict: true } }] })).field).toBe('criteria[1].when');
    const text = refusal(() => normalizeItem({ id: 't', prompt: 'q', response: 'Paris.', rubric: { criteria } }));
    expect(text).toMatchObject({ field: 'response', message: expect.stringMatching(/agent trajectory/) });
  });
});
