import { describe, expect, it } from 'vitest';
import { parseScoreItem } from './input.js';

describe('parseScoreItem', () => {
  it('derives the same id from the same content in every release (clients keep these ids)', () => {
    const item = parseScoreItem({
      prompt: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Name a fruit — ünïcode ✓' },
      ],
      response: 'Apples.',
      reference: 'apples',
      rubric: { criteria: [{ id: 'a', text: 'mentions apples', points: 2 }] },
    });
    expect(item.id).toBe('item_730acf203e785978');
    expect(parseScoreItem({ prompt: 'p', response: 'r', rubric: { criteria: [{ text: 'x' }] } }).id).toBe('item_529265e8d599b0d9');
    expect(parseScoreItem({ prompt: 'p', response: 'r', reference: '', rubric: { criteria: [{ text: 'x' }] } }).id).not.toBe('item_529265e8d599b0d9');
  });
});
