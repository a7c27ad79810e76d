/**
 * `rubricate rejudge`: a results file graded again through the normal pipeline and cache.
 * Unchanged, it makes no call and comes back byte for byte; one criterion changed re-judges
 * exactly the items that carry it; another judge re-judges everything; `--dry-run` prices it
 * first; a file written without its texts is refused with the reason.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { binaryVerdict } from '../src/testing/fake-judge.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { runCliInProcess } from './helpers.js';

const rubrics = [
  { id: 'fever', criteria: [{ id: 'names', text: 'Names the fever threshold', points: 3 }, { id: 'fluids', text: 'Advises fluids', points: 1 }] },
  { id: 'sprain', criteria: [{ id: 'rice', text: 'Mentions rest, ice, compression and elevation', points: 4 }, { id: 'doctor', text: 'Says when to see a doctor', points: 2 }] },
  { id: 'burn', criteria: [{ id: 'cool', text: 'Says to cool the burn under running water', points: 3 }, { id: 'butter', text: 'Recommends butter on the burn', points: -3 }] },
];

function writeInputs(directory: string): { items: string; rubricsFile: string } {
  const items = join(directory, 'items.jsonl');
  const lines = ['fever', 'sprain', 'burn', 'fever', 'sprain', 'fever'].map((rubric, index) => JSON.stringify({ id: `q${index}`, prompt: `A question about a ${rubric} (${index})`, response: `An answer about the ${rubric}, number ${index}.`, rubric_id: rubric }));
  // An unreadable line stays invalid, in its place, when re-judged.
  lines.splice(3, 0, '{"id": "broken", "prompt": 5}');
  writeFileSync(items, `${lines.join('\n')}\n`);
  const rubricsFile = join(directory, 'rubrics.jsonl');
  writeFileSync(rubricsFile, `${rubrics.map((rubric) => JSON.stringify(rubric)).join('\n')}\n`);
  return { items, rubricsFile };
}

describe('rubricate rejudge', () => {
  test('unchanged: no call and the same bytes; one criterion reworded: exactly its items; another judge: every item', async ({ startJudge, tempDir }) => {
    const fake = await startJudge((request) => ({ content: binaryVerdict(request.criteria[0].points > 0 && !request.criteria[0].text.includes('doctor')) }));
    const { items, rubricsFile } = writeInputs(tempDir);
    const judge = ['--judge', 'openai:fake-judge', '--judge-base-url', fake.baseUrl, '--cache', join(tempDir, 'cache.sqlite')];
    const results = join(tempDir, 'results.jsonl');
    const graded = await runCliInProcess(['grade', '--input', items, '--rubrics', rubricsFile, '--out', results, '--scoring', 'healthbench', ...judge]);
    expect(graded.code, graded.stderr).toBe(3);
    expect(fake.requests).toHaveLength(12);

    const dry = await runCliInProcess(['rejudge', '--input', results, '--out', join(tempDir, 'dry.jsonl'), '--dry-run', ...judge]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dry_run: true, judge_calls: 0, cache_hits: 12 });

    const again = join(tempDir, 'again.jsonl');
    const metrics = join(tempDir, 'again-metrics.json');
    const unchanged = await runCliInProcess(['rejudge', '--input', results, '--out', again, '--metrics', metrics, ...judge]);
    expect(unchanged.code, unchanged.stderr).toBe(3);
    expect(fake.requests).toHaveLength(12);
    expect(readFileSync(again, 'utf8')).toBe(readFileSync(results, 'utf8'));
    expect(unchanged.stderr).toContain('re-judged: 0 line(s) changed, 7 unchanged');
    const summary = JSON.parse(readFileSync(metrics, 'utf8')) as { scoring: string; usage: { calls: number; cache_hits: number }; rejudged: unknown };
    // The scoring the results recorded, and what this run spent: nothing.
    expect(summary).toMatchObject({ scoring: 'healthbench', usage: { calls: 0, cache_hits: 12 }, rejudged: { kept: 7, changed: 0 } });

    // One criterion of the "sprain" rubric reworded: its two items, one call each, and nothing else.
    const reworded = join(tempDir, 'rubrics-reworded.jsonl');
    const changed = structuredClone(rubrics);
    changed[1].criteria[1].text = 'Says when to see a doctor, and which signs mean going at once';
    writeFileSync(reworded, `${changed.map((rubric) => JSON.stringify(rubric)).join('\n')}\n`);
    const plan = await runCliInProcess(['rejudge', '--input', results, '--rubrics', reworded, '--out', join(tempDir, 'plan.jsonl'), '--dry-run', ...judge]);
    expect(JSON.parse(plan.stdout)).toMatchObject({ judge_calls: 2, cache_hits: 10 });
    const rejudged = join(tempDir, 'rejudged.jsonl');
    const partial = await runCliInProcess(['rejudge', '--input', results, '--rubrics', reworded, '--out', rejudged, ...judge]);
    expect(partial.code, partial.stderr).toBe(3);
    const newCalls = fake.requests.slice(12);
    expect(newCalls).toHaveLength(2);
    expect(newCalls.map((request) => request.criteria[0].text)).toEqual([changed[1].criteria[1].text, changed[1].criteria[1].text]);
    const before = readFileSync(results, 'utf8').trim().split('\n');
    const after = readFileSync(rejudged, 'utf8').trim().split('\n');
    const differing = after.flatMap((line, index) => (line === before[index] ? [] : [(JSON.parse(line) as { id: string }).id]));
    expect(differing).toEqual(['q1', 'q4']);
    expect(partial.stderr).toContain('re-judged: 2 line(s) changed, 5 unchanged');

    // Another judge (another model name): nothing of the first run is reused.
    const other = await runCliInProcess(['rejudge', '--input', results, '--out', join(tempDir, 'other.jsonl'), ...judge.map((argument) => (argument === 'openai:fake-judge' ? 'openai:other-judge' : argument))]);
    expect(other.code, other.stderr).toBe(3);
    expect(fake.requests).toHaveLength(26);
    const first = JSON.parse(readFileSync(join(tempDir, 'other.jsonl'), 'utf8').split('\n')[0]) as { judge: { model: string } };
    expect(first.judge.model).toBe('other-judge');
  });

  test('a results file written without its texts is refused with the reason, and nothing is called', async ({ fakeJudge, tempDir }) => {
    const { items, rubricsFile } = writeInputs(tempDir);
    const judge = ['--judge', 'openai:fake-judge', '--judge-base-url', fakeJudge.baseUrl, '--cache', join(tempDir, 'cache.sqlite')];
    const results = join(tempDir, 'bare.jsonl');
    await runCliInProcess(['grade', '--input', items, '--rubrics', rubricsFile, '--out', results, '--no-text', ...judge]);
    const calls = fakeJudge.requests.length;
    const refused = await runCliInProcess(['rejudge', '--input', results, '--out', join(tempDir, 'never.jsonl'), ...judge]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/cannot be re-judged: it was written without its texts \(grade --no-text\)/);
    expect(fakeJudge.requests).toHaveLength(calls);
  });

  test('a rubric the line cannot hold (a scale) needs --rubrics, and says so per line', async ({ fakeJudge, tempDir }) => {
    const items = join(tempDir, 'scaled.jsonl');
    writeFileSync(items, `${JSON.stringify({ id: 's1', prompt: 'p', response: 'r', rubric: { id: 'scaled', criteria: [{ id: 'c', text: 'Rates clarity', scale: { type: 'ordinal', choices: [{ label: 'low' }, { label: 'high' }] } }] } })}\n`);
    fakeJudge.setScript(() => ({ content: { explanation: 'Clear.', choice: 'high' } }));
    const judge = ['--judge', 'openai:fake-judge', '--judge-base-url', fakeJudge.baseUrl, '--cache', join(tempDir, 'cache.sqlite')];
    const results = join(tempDir, 'results.jsonl');
    expect((await runCliInProcess(['grade', '--input', items, '--out', results, ...judge])).code).toBe(0);
    const out = join(tempDir, 'rejudged.jsonl');
    const refused = await runCliInProcess(['rejudge', '--input', results, '--out', out, ...judge]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/results line cannot be graded again: its rubric has parts a results line does not keep .* give the rubrics with --rubrics FILE/);
    const rubricsFile = join(tempDir, 'rubrics.jsonl');
    writeFileSync(rubricsFile, `${JSON.stringify((JSON.parse(readFileSync(items, 'utf8')) as { rubric: unknown }).rubric)}\n`);
    const calls = fakeJudge.requests.length;
    const given = await runCliInProcess(['rejudge', '--input', results, '--rubrics', rubricsFile, '--out', out, ...judge]);
    expect(given.code, given.stderr).toBe(0);
    expect(fakeJudge.requests).toHaveLength(calls);
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(results, 'utf8'));
  });
});
