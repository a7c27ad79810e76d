import { describe, expect, it } from 'vitest';
import { RubricateError } from '../errors.js';
import { normalizeTrajectory, type TrajectoryMessageInput } from '../trajectory/trajectory.js';
import { runCheck, validateCheck } from './registry.js';

const messages: TrajectoryMessageInput[] = [
  { role: 'user', content: 'Please cancel reservation ABC123 and refund me.' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_reservation', arguments: '{"reservation_id":"ABC123"}' } }] },
  { role: 'tool', tool_call_id: 'c1', content: '{"reservation_id":"ABC123","status":"active","total":300.5,"passengers":[{"name":"Ada"}]}' },
  { role: 'assistant', content: 'I will cancel ABC123 for a refund of $300.50. Shall I proceed (yes/no)?', reasoning: 'Need confirmation first.' },
  { role: 'user', content: 'yes' },
  { role: 'assistant', content: '', tool_calls: [{ id: 'c2', type: 'function', function: { name: 'cancel_reservation', arguments: '{"reservation_id":"ABC123","reason":"change of plan","refund":{"amount":300.5,"to":"card"}}' } }] },
  { role: 'tool', tool_call_id: 'c2', content: 'Error: reason must be one of ...' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c3', type: 'function', function: { name: 'cancel_reservation', arguments: '{"reservation_id":"ABC123","reason":"other","refund":{"amount":300.5,"to":"card","note":"x"}}' } }] },
  { role: 'tool', tool_call_id: 'c3', content: '{"reservation_id":"ABC123","status":"cancelled","total":300.5}' },
  { role: 'assistant', content: 'Done: ABC123 is cancelled and $300.50 will be refunded.' },
];
const trajectory = normalizeTrajectory(messages);
const context = { prompt: '', mode: 'strict' as const, trajectory };
const run = (spec: Record<string, unknown>) => runCheck(spec as { type: string }, '', context);
const passes = (spec: Record<string, unknown>) => run(spec).passed;
function invalidField(spec: Record<string, unknown>): string | undefined {
  const result = validateCheck(spec as { type: string });
  if (result.ok) return undefined;
  expect(result.error.code).toBe('CHECK_INVALID');
  return String(result.error.details?.field);
}

describe('trajectory checks', () => {
  it('tool_called counts calls by name, with min/max and successful-only', () => {
    expect(passes({ type: 'tool_called', name: 'cancel_reservation' })).toBe(true);
    expect(passes({ type: 'tool_called', name: 'cancel_reservation', max: 1 })).toBe(false);
    expect(passes({ type: 'tool_called', name: 'cancel_reservation', max: 1, successfulOnly: true })).toBe(true);
    expect(passes({ type: 'tool_called', name: ['get_reservation', 'cancel_reservation'], min: 3, max: 3 })).toBe(true);
    expect(passes({ type: 'tool_called', name: 'transfer_to_human', min: 0, max: 0 })).toBe(true);
    expect(passes({ type: 'tool_called', name: 'transfer_to_human' })).toBe(false);
    expect(run({ type: 'tool_called', name: 'cancel_reservation' }).detail).toContain('step');
    expect(invalidField({ type: 'tool_called', name: 'x', min: 2, max: 1 })).toBe('max');
    expect(invalidField({ type: 'tool_called', name: '' })).toBe('name');
    expect(invalidField({ type: 'tool_called' })).toBe('name');
    expect(invalidField({ type: 'tool_called', name: 'x', min: -1 })).toBe('min');
    expect(invalidField({ type: 'tool_called', name: 'x', mx: 1 })).toBe('mx');
  });

  it('tool_args_match: subset, exact, top-level exact, tolerance and match modes', () => {
    expect(passes({ type: 'tool_args_match', name: 'get_reservation', args: { reservation_id: 'ABC123' }, exact: true })).toBe(true);
    expect(passes({ type: 'tool_args_match', name: 'cancel_reservation', args: { reason: 'other' } })).toBe(true);
    expect(passes({ type: 'tool_args_match', name: 'cancel_reservation', args: { reason: 'other' }, match: 'all' })).toBe(false);
    expect(passes({ type: 'tool_args_match', name: 'cancel_reservation', args: { reason: 'other' }, match: 'last' })).toBe(true);
    const expected = { reservation_id: 'ABC123', reason: 'other', refund: { amount: 300.5, to: 'card' } };
    expect(passes({ type: 'tool_args_match', name: 'cancel_reservation', args: expected, exact: true })).toBe(false);
    expect(passes({ type: 'tool_args_match', name: 'cancel_reservation', args: expected, exact: 'top_level' })).toBe(true);
    expect(passes({ type: 'tool_args_match', name: 'cancel_reservation', args: { reservation_id: 'ABC123' }, exact: 'top_level' })).toBe(false);
    expect(passes({ type: 'tool_args_match', name: 'cancel_reservation', args: { refund: { amount: 300 } } })).toBe(false);
    expect(passes({ type: 'tool_args_match', name: 'cancel_reservation', args: { refund: { amount: 300 } }, tolerance: 0.5 })).toBe(true);
    expect(passes({ type: 'tool_args_match', name: 'cancel_reservation', args: { reason: 'change of plan' }, successfulOnly: true })).toBe(false);
    expect(run({ type: 'tool_args_match', name: 'book', args: {} }).detail).toBe('book was never called');
    expect(invalidField({ type: 'tool_args_match', name: 'x', args: [1] })).toBe('args');
    expect(invalidField({ type: 'tool_args_match', name: 'x', args: {}, tolerance: -1 })).toBe('tolerance');
    expect(invalidField({ type: 'tool_args_match', name: 'x', args: {}, exact: 'deep' })).toBe('exact');
    expect(invalidField({ type: 'tool_args_match', args: {} })).toBe('name');
  });

  it('compares own keys only: arguments named __proto__, toString or constructor are data, never found on (or excused by) Object.prototype', () => {
    const hostile = normalizeTrajectory([
      { role: 'assistant', content: null, tool_calls: [{ id: 'h', function: { name: 'cancel_reservation', arguments: '{"reservation_id":"ABC123","__proto__":{"admin":true}}' } }] },
      { role: 'tool', tool_call_id: 'h', content: '{"status":"cancelled"}' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'i', function: { name: 'book_reservation', arguments: '{"flight":"HAT001","toString":"x"}' } }] },
      { role: 'tool', tool_call_id: 'i', content: '{"status":"booked"}' },
    ]);
    const on = (spec: Record<string, unknown>) => runCheck(spec as { type: string }, '', { prompt: '', mode: 'strict', trajectory: hostile });
    expect(on({ type: 'tool_args_match', name: 'cancel_reservation', args: { reservation_id: 'ABC123' }, exact: 'top_level' })).toMatchObject({ passed: false, detail: expect.stringContaining('$.__proto__: not expected') });
    expect(on({ type: 'tool_args_match', name: 'book_reservation', args: { flight: 'HAT001' }, exact: true })).toMatchObject({ passed: false, detail: expect.stringContaining('$.toString: not expected') });
    expect(on({ type: 'tool_args_match', name: 'book_reservation', args: { flight: 'HAT001', constructor: 'x' } })).toMatchObject({ passed: false, detail: expect.stringContaining('$.constructor: missing') });
    expect(on({ type: 'final_state', tool: 'cancel_reservation', path: '$.constructor', exists: false }).passed).toBe(true);
    expect(on({ type: 'final_state', tool: 'cancel_reservation', path: '$.toString', exists: true }).passed).toBe(false);
    // An expected "__proto__" would be dropped by any object schema on the way: refused, naming it.
    expect(invalidField({ type: 'tool_args_match', name: 'x', args: JSON.parse('{"id":1,"__proto__":{"admin":true}}') as Record<string, unknown> })).toBe('args.__proto__');
  });

  it('tool_order: subsequence, contiguous, exact and before/after', () => {
    expect(passes({ type: 'tool_order', sequence: ['get_reservation', 'cancel_reservation'] })).toBe(true);
    expect(passes({ type: 'tool_order', sequence: ['cancel_reservation', 'get_reservation'] })).toBe(false);
    expect(passes({ type: 'tool_order', sequence: ['cancel_reservation', 'cancel_reservation'], mode: 'contiguous' })).toBe(true);
    expect(passes({ type: 'tool_order', sequence: ['get_reservation', 'cancel_reservation'], mode: 'exact' })).toBe(false);
    expect(passes({ type: 'tool_order', sequence: ['get_reservation', 'cancel_reservation', 'cancel_reservation'], mode: 'exact' })).toBe(true);
    expect(passes({ type: 'tool_order', before: 'get_reservation', after: 'cancel_reservation' })).toBe(true);
    expect(passes({ type: 'tool_order', before: 'cancel_reservation', after: 'get_reservation' })).toBe(false);
    expect(passes({ type: 'tool_order', before: 'get_reservation', after: 'refund' })).toBe(true);
    expect(passes({ type: 'tool_order', before: 'get_reservation', after: 'refund', requireBoth: true })).toBe(false);
    expect(invalidField({ type: 'tool_order' })).toBe('sequence');
    expect(invalidField({ type: 'tool_order', before: 'a' })).toBe('after');
    expect(invalidField({ type: 'tool_order', sequence: ['a'], before: 'a', after: 'b' })).toBe('sequence');
    expect(invalidField({ type: 'tool_order', sequence: [] })).toBe('sequence');
    expect(invalidField({ type: 'tool_order', sequence: ['a'], mode: 'loose' })).toBe('mode');
  });

  it('no_tool_after: nothing (or none of the listed tools) after the first call of a tool', () => {
    expect(passes({ type: 'no_tool_after', tool: 'get_reservation' })).toBe(false);
    expect(passes({ type: 'no_tool_after', tool: 'get_reservation', names: ['transfer_to_human'] })).toBe(true);
    expect(passes({ type: 'no_tool_after', tool: 'transfer_to_human' })).toBe(true);
    expect(run({ type: 'no_tool_after', tool: 'get_reservation' }).detail).toContain('cancel_reservation@step');
    expect(invalidField({ type: 'no_tool_after' })).toBe('tool');
    expect(invalidField({ type: 'no_tool_after', tool: 'x', names: [] })).toBe('names');
  });

  it('final_state: JSON-path assertions over the last result of a tool', () => {
    expect(passes({ type: 'final_state', tool: 'cancel_reservation', path: '$.status', equals: 'cancelled' })).toBe(true);
    expect(passes({ type: 'final_state', tool: 'get_reservation', path: '$.status', equals: 'cancelled' })).toBe(false);
    expect(passes({ type: 'final_state', tool: 'get_reservation', path: '$.passengers[0].name', equals: 'Ada' })).toBe(true);
    expect(passes({ type: 'final_state', tool: 'get_reservation', path: "$['passengers'][0]['name']", matches: '^A' })).toBe(true);
    expect(passes({ type: 'final_state', tool: 'get_reservation', path: 'total', equals: 300, tolerance: 1 })).toBe(true);
    expect(passes({ type: 'final_state', tool: 'get_reservation', path: 'total', equals: 300 })).toBe(false);
    expect(passes({ type: 'final_state', tool: 'get_reservation', path: '$.refund', exists: false })).toBe(true);
    expect(passes({ type: 'final_state', tool: 'get_reservation', path: '$.missing', equals: 1 })).toBe(false);
    expect(run({ type: 'final_state', tool: 'refund', path: '$.x', exists: true })).toEqual({ passed: false, detail: 'no result of refund' });
    expect(invalidField({ type: 'final_state', tool: 'x', path: '$.a' })).toBe('equals');
    expect(invalidField({ type: 'final_state', tool: 'x', path: '$.a', equals: 1, exists: true })).toBe('equals');
    expect(invalidField({ type: 'final_state', tool: 'x', path: '$.a[', exists: true })).toBe('path');
    expect(invalidField({ type: 'final_state', tool: 'x', path: '$.a', matches: '(' })).toBe('matches');
  });

  it('step_count_at_most counts steps, tool calls or assistant turns', () => {
    // 10 messages → 11 steps: message 4's reasoning and text are two steps, message 6's empty text is none.
    expect(passes({ type: 'step_count_at_most', max: 11 })).toBe(true);
    expect(passes({ type: 'step_count_at_most', max: 10 })).toBe(false);
    expect(passes({ type: 'step_count_at_most', max: 3, count: 'tool_calls' })).toBe(true);
    expect(passes({ type: 'step_count_at_most', max: 3, count: 'assistant_turns' })).toBe(false);
    expect(invalidField({ type: 'step_count_at_most' })).toBe('max');
    expect(invalidField({ type: 'step_count_at_most', max: 1.5 })).toBe('max');
    expect(invalidField({ type: 'step_count_at_most', max: 1, count: 'tokens' })).toBe('count');
  });

  it('message_matches: assistant text (with reasoning) or user-visible turns only', () => {
    expect(passes({ type: 'message_matches', pattern: 'proceed \\(yes/no\\)' })).toBe(true);
    expect(passes({ type: 'message_matches', pattern: 'confirmation first' })).toBe(true);
    expect(passes({ type: 'message_matches', pattern: 'confirmation first', scope: 'user_visible' })).toBe(false);
    expect(passes({ type: 'message_matches', pattern: '^yes$', scope: 'user_visible' })).toBe(true);
    expect(passes({ type: 'message_matches', pattern: '^yes$' })).toBe(false);
    expect(passes({ type: 'message_matches', pattern: 'password', flags: 'i', mustMatch: false })).toBe(true);
    expect(passes({ type: 'message_matches', pattern: '30050' })).toBe(false);
    expect(passes({ type: 'message_matches', pattern: '\\$30050', stripCharacters: '.' })).toBe(true);
    expect(invalidField({ type: 'message_matches', pattern: '(' })).toBe('pattern');
    expect(invalidField({ type: 'message_matches', pattern: 'a', flags: 'g' })).toBe('flags');
    expect(invalidField({ type: 'message_matches', pattern: 'a', scope: 'tools' })).toBe('scope');
  });

  it('every trajectory check is an error (not a pass or fail) on a plain-text response', () => {
    for (const spec of [
      { type: 'tool_called', name: 'x' },
      { type: 'tool_args_match', name: 'x', args: {} },
      { type: 'tool_order', sequence: ['x'] },
      { type: 'no_tool_after', tool: 'x' },
      { type: 'final_state', tool: 'x', path: '$', exists: true },
      { type: 'step_count_at_most', max: 1 },
      { type: 'message_matches', pattern: 'x' },
    ]) {
      let error: unknown;
      try {
        runCheck(spec, 'plain text', { prompt: '', mode: 'strict' });
      } catch (caught) {
        error = caught;
      }
      expect(RubricateError.isInstance(error) && error.code).toBe('CHECK_INVALID');
      expect((error as Error).message).toContain('needs a trajectory');
    }
  });
});
