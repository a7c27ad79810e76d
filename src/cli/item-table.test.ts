import { describe, expect, it } from 'vitest';
import type { ResultRecord } from '../results/results.js';
import { scriptedLabel } from '../judges/scripted.js';
import { autoTableItems, ItemTable, showItemTable } from './item-table.js';

function result(id: string, extra: Partial<ResultRecord> = {}): ResultRecord {
  return {
    id,
    status: 'ok',
    score: 0.5,
    criteria: [
      { id: 'a', points: 1, tags: [], kind: 'principle', source: 'judge', status: 'ok', met: true, value: 1 },
      { id: 'b', points: 1, tags: [], kind: 'principle', source: 'judge', status: 'ok', met: false, value: 0 },
    ],
    ...extra,
  } as ResultRecord;
}

describe('the per-item table', () => {
  it('shows on a terminal for a few items by itself; --table always; --no-table and --quiet never', () => {
    expect(showItemTable({}, autoTableItems, true)).toBe(true);
    expect(showItemTable({}, autoTableItems + 1, true)).toBe(false);
    expect(showItemTable({}, 3, false)).toBe(false);
    expect(showItemTable({ table: true }, 1000, false)).toBe(true);
    expect(showItemTable({ table: false }, 3, true)).toBe(false);
    expect(showItemTable({ table: true, quiet: true }, 3, true)).toBe(false);
  });

  it('one row per item: id, score, criteria met of all, errors by code; made-up verdicts labelled', () => {
    const table = new ItemTable();
    table.add(result('real', { judge: { id: 'openai:gpt-4.1', model: 'gpt-4.1', template_version: 'v', mode: 'per-criterion' } }));
    table.add(result('invented', { criteria: [{ id: 'a', points: 1, tags: [], kind: 'principle', source: 'judge', status: 'ok', met: true, value: 1, explanation: scriptedLabel }] } as Partial<ResultRecord>));
    table.add(result('failed', { status: 'error', score: null, criteria: [{ id: 'a', points: 1, tags: [], kind: 'principle', source: 'judge', status: 'error', met: null, error: { code: 'JUDGE_TIMEOUT', message: 'no answer' } }] } as Partial<ResultRecord>));
    table.add(result('bad\u001b[31mline', { status: 'invalid', score: null, criteria: [], error: { code: 'INPUT_INVALID', message: 'x' } } as Partial<ResultRecord>));
    const lines = table.render().split('\n');
    expect(lines[0].split(/\s+/)).toEqual(['item', 'score', 'met/total', 'errors', 'verdicts']);
    expect(lines[2].split(/\s{2,}/)).toEqual(['real', '0.5000', '1/2', '0']);
    expect(lines[3].split(/\s{2,}/)).toEqual(['invented', '0.5000', '1/1', '0', 'made up']);
    expect(lines[4].split(/\s{2,}/)).toEqual(['failed', '—', '0/1', '1 (JUDGE_TIMEOUT)']);
    // A terminal escape in an id is shown, not obeyed.
    expect(lines[5].split(/\s{2,}/)).toEqual(['bad?[31mline', '—', '—', 'invalid (INPUT_INVALID)']);
    expect(lines[6]).toBe("made up: 1 of 4 items have verdicts no model gave (the scripted judge or rubricate fake-judge); do not read them as a judge's");
  });

  it('keeps a bounded number of rows and counts the rest', () => {
    const table = new ItemTable();
    for (let index = 0; index < 503; index += 1) table.add(result(`q${index}`));
    const lines = table.render().split('\n');
    expect(lines).toHaveLength(2 + 500 + 1);
    expect(lines.at(-1)).toBe('… and 3 more items (in the results file)');
    expect(table.items).toBe(503);
  });
});
