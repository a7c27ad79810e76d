import { describe, expect, it } from 'vitest';
import { RubricateError } from '../errors.js';
import { normalizeItem } from '../rubric/normalize.js';
import { parseRenderedTrajectory, renderedStepOffsets, renderTrajectory } from './render.js';
import { citedSteps, normalizeTrajectory, toolCalls, trajectorySteps, type TrajectoryMessageInput } from './trajectory.js';

const rubric = { criteria: [{ id: 'c', text: 'The agent confirms before cancelling.' }] };
const response = [
  { role: 'user', content: 'Cancel my booking.' },
  { role: 'assistant', content: 'Sure.', reasoning: 'Look it up first.', tool_calls: [{ id: 't1', type: 'function', function: { name: 'lookup', arguments: '{"id": 7}' } }] },
  { role: 'tool', tool_call_id: 't1', content: '{"found":true}' },
  { role: 'assistant', content: [{ type: 'text', text: 'Found it.' }] },
];

function inputError(record: unknown): RubricateError {
  try {
    normalizeItem(record, { file: 'items.jsonl', line: 4 });
  } catch (error) {
    if (RubricateError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an INPUT_INVALID error');
}

describe('trajectory items', () => {
  it('accepts a message list as response: numbered-step rendering for judges, structured trajectory for checks', () => {
    const item = normalizeItem({ id: 1, prompt: 'Help me', response, rubric });
    expect(item.response).toBe(
      ['[step 1] user: Cancel my booking.', '[step 2] assistant reasoning: Look it up first.', '[step 3] assistant: Sure.', '[step 4] tool call lookup({"id":7})', '[step 5] tool result lookup: {"found":true}', '[step 6] assistant: Found it.'].join('\n\n'),
    );
    expect(item.trajectory?.[1].toolCalls).toEqual([{ id: 't1', name: 'lookup', arguments: { id: 7 } }]);
    expect(toolCalls(item.trajectory!)).toEqual([{ id: 't1', name: 'lookup', arguments: { id: 7 }, step: 4, result: '{"found":true}' }]);
    // Different arguments → different rendered text, so cache keys and results differ.
    const other = normalizeItem({ id: 1, prompt: 'Help me', response: [response[0], { ...response[1], tool_calls: [{ id: 't1', type: 'function', function: { name: 'lookup', arguments: '{"id": 8}' } }] }, response[2], response[3]], rubric });
    expect(other.response).not.toBe(item.response);
  });

  it('names file, line and field for bad trajectory messages', () => {
    const bad = (messages: unknown[]) => inputError({ id: 1, prompt: 'p', response: messages, rubric });
    let error = bad([{ role: 'assistant', content: null, tool_calls: [{ id: 'x', function: { name: 'f', arguments: '{oops' } }] }]);
    expect(error.details).toMatchObject({ file: 'items.jsonl', line: 4, field: 'response[0].tool_calls[0].function.arguments' });
    expect(error.message).toMatch(/not valid JSON/);
    error = bad([{ role: 'tool', tool_call_id: 'nope', content: 'x' }]);
    expect(error.details?.field).toBe('response[0].tool_call_id');
    expect(error.message).toMatch(/matches no earlier tool call/);
    error = bad([{ role: 'tool', content: 'x' }]);
    expect(error.details?.field).toBe('response[0].tool_call_id');
    error = bad([{ role: 'user', content: 'x', tool_calls: [{ function: { name: 'f' } }] }]);
    expect(error.details?.field).toBe('response[0].tool_calls');
    error = bad([{ role: 'robot', content: 'x' }]);
    expect(error.details?.field).toBe('response[0].role');
    error = bad([]);
    expect(error.details?.field).toBe('response');
    error = bad([{ role: 'assistant', content: null, tool_calls: [{ function: { name: '' } }] }]);
    expect(error.details?.field).toBe('response[0].tool_calls[0].function.name');
  });

  it('truncates long tool results only when asked, with an explicit marker', () => {
    const trajectory = normalizeTrajectory([
      { role: 'assistant', content: null, tool_calls: [{ id: 'a', function: { name: 'read', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'a', content: 'x'.repeat(50) },
    ]);
    expect(renderTrajectory(trajectory)).toContain('x'.repeat(50));
    const cut = renderTrajectory(trajectory, { maxResultCharacters: 10 });
    expect(cut).toContain(`${'x'.repeat(10)} [… truncated: 40 more characters of 50 not shown]`);
    expect(cut).not.toContain('x'.repeat(11));
  });

  it('reads the steps a verdict cites', () => {
    expect(citedSteps('Confirmed at step 4; the write is [step 9]. Steps 3, 5 and 7 ask; steps 10-12 search.', 20)).toEqual([4, 9, 3, 5, 7, 10, 11, 12]);
    expect(citedSteps('step 0 and step 99 do not exist; 12 items', 20)).toEqual([]);
  });
});

describe('reading a rendering back into steps (the report)', () => {
  it('finds every step with its kind, tool and body, even when a message quotes a step header or spans paragraphs', () => {
    const messages: TrajectoryMessageInput[] = [
      { role: 'system', content: 'Policy.' },
      ...(response as TrajectoryMessageInput[]),
      { role: 'user' as const, content: 'First paragraph.\n\n[step 3] user: a quoted header, not a step\n\n[step 9] tool call fake({})' },
      { role: 'assistant' as const, content: null, tool_calls: [{ id: 't2', type: 'function' as const, function: { name: 'book', arguments: { nested: { a: [1, 2] }, text: 'x(y)' } } }] },
      { role: 'tool' as const, tool_call_id: 't2', content: '' },
    ];
    const trajectory = normalizeTrajectory(messages);
    const { text, offsets } = renderedStepOffsets(trajectory);
    expect(text).toBe(renderTrajectory(trajectory));
    const parsed = parseRenderedTrajectory(text, offsets)!;
    const steps = trajectorySteps(trajectory);
    expect(parsed.map((step) => ({ number: step.number, kind: step.kind, toolName: step.toolName }))).toEqual(steps.map((step) => ({ number: step.number, kind: step.kind, toolName: step.toolName })));
    expect(parsed.map((step) => text.slice(step.bodyStart, step.bodyEnd))).toEqual(steps.map((step) => (step.kind === 'tool_call' ? JSON.stringify(step.toolArguments) : step.text)));
  });

  it('without recorded offsets, skips quoted headers that are out of sequence; wrong offsets fall back to that reading', () => {
    const trajectory = normalizeTrajectory([...(response as TrajectoryMessageInput[]), { role: 'user', content: 'Look:\n\n[step 2] user: quoted' }, { role: 'assistant', content: 'ok' }]);
    const { text, offsets } = renderedStepOffsets(trajectory);
    const expected = trajectorySteps(trajectory).map((step) => step.kind);
    expect(parseRenderedTrajectory(text)!.map((step) => step.kind)).toEqual(expected);
    expect(parseRenderedTrajectory(text, offsets.map((offset) => offset + 1))!.map((step) => step.kind)).toEqual(expected);
    expect(parseRenderedTrajectory(text, [0, 5])!.map((step) => step.kind)).toEqual(expected);
  });

  it('is null for text that is not a rendering', () => {
    expect(parseRenderedTrajectory('A plain answer.')).toBeNull();
    expect(parseRenderedTrajectory('Intro\n\n[step 1] user: hi')).toBeNull();
    expect(parseRenderedTrajectory('[step 2] user: starts at two')).toBeNull();
  });
});
