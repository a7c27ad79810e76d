import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toScoredItem, type GradedCriterion, type ResultRecord } from '../results/results.js';
import { aggregate, getScoring } from '../scoring/registry.js';
import { ErrorTally, retryAdvice } from '../pipeline/error-summary.js';
import { collectRun, criterionFailed, histogram, histogramEdges, itemTagScores, packCriterionFlags } from './collect.js';
import { syntheticResultRecords } from './synthetic.js';
import { test } from '../testing/vitest-fixtures.js';

let directory: string;
test.beforeAll(({ fileTempDir }) => {
  directory = fileTempDir;
});

function writeResults(name: string, lines: Array<ResultRecord | string>): string {
  const file = join(directory, name);
  writeFileSync(file, lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n');
  return file;
}

function criterion(id: string, points: number, met: boolean | null, extra: Partial<GradedCriterion> = {}): GradedCriterion {
  return { id, text: `criterion ${id}`, points, tags: [], kind: 'principle', source: 'judge', status: met === null ? 'error' : 'ok', met, ...extra };
}

function record(id: string, criteria: GradedCriterion[], extra: Partial<ResultRecord> = {}): ResultRecord {
  return { id, status: 'ok', score: null, criteria, rubricate_version: '0.1.0', scoring: 'healthbench', ...extra };
}

describe('collectRun', () => {
  const records = [...syntheticResultRecords({ items: 120, criteriaPerItem: 6, seed: 11, errorRate: 0.05 })];

  it('computes the same metrics as the scoring registry, counting unreadable lines as invalid and reporting them by file:line', async () => {
    const lines: Array<ResultRecord | string> = [...records];
    lines.splice(10, 0, '{"id": "broken", ');
    lines.splice(40, 0, '{"id": "x", "status": "done", "criteria": []}');
    const file = writeResults('metrics.jsonl', lines);
    const warnings: string[] = [];
    const run = await collectRun(file, { onWarning: (message) => warnings.push(message) });

    const expected = aggregate(getScoring('healthbench'), [...records.map(toScoredItem), { id: '', status: 'invalid', criteria: [] }, { id: '', status: 'invalid', criteria: [] }]);
    expect(run.data.summary.metrics).toEqual(expected);
    expect(run.data.summary.metrics.n_invalid).toBe(2);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain(`${file}:11`);
    expect(warnings[1]).toContain(`${file}:41`);
    expect(run.data.summary.invalidLines.map((line) => line.line)).toEqual([11, 41]);
    expect(run.data.items.ids).toEqual(records.map((each) => each.id));
    expect(run.data.items.lines[10]).toBe(12);
  });

  it('scores every item with the scoring and counts criteria the way the charts show them', async () => {
    const file = writeResults('counts.jsonl', records);
    const run = await collectRun(file);
    const scoring = getScoring('healthbench');
    expect(run.data.items.scores).toEqual(records.map((each) => scoring.itemScore(toScoredItem(each))));

    const all = records.flatMap((each) => each.criteria);
    const graded = all.filter((each) => each.status === 'ok');
    const failed = graded.filter((each) => criterionFailed(each.points, each.met));
    expect(run.data.summary.criteria).toEqual({
      total: all.length,
      evaluated: graded.length,
      met: graded.filter((each) => each.met).length,
      failed: failed.length,
      errors: all.filter((each) => each.status === 'error').length,
      skipped: 0,
    });
    for (const source of ['judge', 'check'] as const) {
      const ofSource = graded.filter((each) => each.source === source);
      expect(run.data.summary.bySource[source].evaluated).toBe(ofSource.length);
      expect(run.data.summary.bySource[source].failed).toBe(ofSource.filter((each) => criterionFailed(each.points, each.met)).length);
    }

    // Most-failed rows, recounted by criterion text.
    const byText = new Map<string | undefined, { failed: number; evaluated: number }>();
    for (const each of graded) {
      const row = byText.get(each.text) ?? { failed: 0, evaluated: 0 };
      row.evaluated += 1;
      if (criterionFailed(each.points, each.met)) row.failed += 1;
      byText.set(each.text, row);
    }
    const top = run.data.summary.mostFailed;
    expect(top.length).toBeGreaterThan(3);
    for (const row of top) expect({ failed: row.failed, evaluated: row.evaluated }).toEqual(byText.get(row.text));
    const maximum = Math.max(...[...byText.values()].map((row) => row.failed));
    expect(top[0].failed).toBe(maximum);
    for (let index = 1; index < top.length; index += 1) expect(top[index - 1].failed).toBeGreaterThanOrEqual(top[index].failed);
    const example = records[top[0].exampleItem];
    expect(example.criteria.some((each) => each.text === top[0].text && criterionFailed(each.points, each.met))).toBe(true);

    expect(run.data.summary.judges).toHaveLength(1);
    expect(run.data.summary.usage.calls).toBe(records.reduce((total, each) => total + (each.usage?.calls ?? 0), 0));
    expect(run.data.summary.costUsd).toBeGreaterThan(0);
  });

  it('packs criterion flags losslessly', () => {
    const seen = new Set<number>();
    for (const status of ['ok', 'error', 'skipped'] as const)
      for (const met of [true, false, null])
        for (const source of ['judge', 'check'] as const)
          for (const kind of ['principle', 'hard_rule'] as const) seen.add(packCriterionFlags({ status, met, source, kind }));
    expect(seen.size).toBe(36);
  });

  it('splits long texts into chunks whose indices are local', async () => {
    const file = writeResults('chunks.jsonl', records.slice(0, 25));
    const run = await collectRun(file, { textChunkSize: 10 });
    expect(run.texts.map((chunk) => [chunk.firstItem, chunk.responses.length])).toEqual([
      [0, 10],
      [10, 10],
      [20, 5],
    ]);
    const chunk = run.texts[1];
    expect(chunk.strings[chunk.responses[3]]).toBe(records[13].response);
    const position = run.data.items.criteriaOffsets[13] + 2;
    expect(chunk.strings[chunk.explanations[position - chunk.firstCriterion]]).toBe(records[13].criteria[2].explanation);
    expect(chunk.explanations).toHaveLength(run.data.items.criteriaOffsets[20] - run.data.items.criteriaOffsets[10]);
  });

  it('per-item tag scores average to the aggregate by-tag scores', async () => {
    const file = writeResults('tags.jsonl', records);
    const scoring = getScoring('weighted_mean');
    const run = await collectRun(file, { scoring: 'weighted_mean', keepTagScores: true });
    const sums = new Map<string, { total: number; count: number }>();
    for (const scores of run.tagScores ?? []) {
      for (const [tag, value] of scores ?? []) {
        const entry = sums.get(tag) ?? { total: 0, count: 0 };
        entry.total += value;
        entry.count += 1;
        sums.set(tag, entry);
      }
    }
    const metrics = run.data.summary.metrics;
    expect(metrics.scoring).toBe('weighted_mean');
    expect([...sums.keys()].sort()).toEqual(Object.keys(metrics.by_tag).sort());
    for (const [tag, entry] of sums) {
      expect(entry.count).toBe(metrics.by_tag[tag].n_samples);
      expect(entry.total / entry.count).toBeCloseTo(metrics.by_tag[tag].score, 12);
    }
    // A gated item keeps its 0 on item tags and gets no criterion-tag scores.
    const gated = itemTagScores(scoring, { id: 'g', status: 'ok', gated: true, tags: ['theme:x'], criteria: [{ id: 'a', points: 5, tags: ['axis:y'], status: 'ok', met: true }] });
    expect([...(gated ?? [])]).toEqual([['theme:x', 0]]);
  });

  it("keeps an agentic judge's tool calls, on a verdict and in an error's details", async () => {
    const fetched = { name: 'fetch', arguments: { url: 'https://sources.example/a' }, outcome: 'ok' as const, summary: 'HTTP 200 text/plain, 10 bytes', bytes: 10 };
    const refused = { name: 'fetch', arguments: { url: 'https://elsewhere.example/' }, outcome: 'error' as const, summary: 'tool fetch: elsewhere.example is not on the allow-list', bytes: 0, error: { code: 'JUDGE_TOOL_REFUSED', message: 'refused' } };
    const file = writeResults('tools.jsonl', [
      record('a', [criterion('c1', 5, true, { tool_calls: [fetched] }), criterion('c2', 3, null, { status: 'error', error: { code: 'JUDGE_TOOL_REFUSED', message: 'refused', details: { tool_calls: [refused] } } })], { status: 'error' }),
    ]);
    const run = await collectRun(file);
    expect(run.data.criteria.extras).toEqual([
      [0, { tool_calls: [{ name: 'fetch', outcome: 'ok', summary: 'HTTP 200 text/plain, 10 bytes', arguments: '{"url":"https://sources.example/a"}' }] }],
      [1, { error: { code: 'JUDGE_TOOL_REFUSED', message: 'refused' }, tool_calls: [{ name: 'fetch', outcome: 'error', summary: refused.summary, arguments: '{"url":"https://elsewhere.example/"}' }] }],
    ]);
  });

  it('keeps rare verdict fields, item errors and gating', async () => {
    const file = writeResults('extras.jsonl', [
      record('a', [criterion('c1', 5, true, { value: 0.5, label: 'Partially', probability: 0.7 }), criterion('c2', 3, null, { error: { code: 'JUDGE_TIMEOUT', message: 'timed out' } })], {
        status: 'error',
        error: { code: 'JUDGE_TIMEOUT', message: '1 of 2 criteria could not be graded' },
      }),
      record('b', [criterion('c1', 5, false, { kind: 'hard_rule', source: 'check' }), criterion('c2', 3, null, { status: 'skipped', skip_reason: 'gated' })], { gated: true }),
    ]);
    const run = await collectRun(file);
    expect(run.data.criteria.extras).toEqual([
      [0, { value: 0.5, label: 'Partially', probability: 0.7 }],
      [1, { error: { code: 'JUDGE_TIMEOUT', message: 'timed out' } }],
      [3, { skip_reason: 'gated' }],
    ]);
    expect(run.data.items.flags).toEqual([0, 1]);
    expect(run.data.items.scores).toEqual([null, 0]);
    const [item, code, message] = run.data.items.errors;
    expect(item).toBe(0);
    expect(run.data.strings[code]).toBe('JUDGE_TIMEOUT');
    expect(run.texts[0].strings[message]).toBe('1 of 2 criteria could not be graded');
    expect(run.data.summary.criteria.skipped).toBe(1);
    expect(run.data.summary.bySource.check).toMatchObject({ criteria: 1, evaluated: 1, failed: 1 });
  });
});

describe('collectRun: failures, digest and kept judge calls', () => {
  it('counts the errors by code as the CLI does, says what share of the items the score covers and how to finish', async () => {
    const records = [...syntheticResultRecords({ items: 31, criteriaPerItem: 4, seed: 5, errorRate: 0.3 })];
    const file = writeResults('failed.jsonl', [...records, 'not json', '{"id": "x", "status": "done"}']);
    const run = await collectRun(file);
    const tally = new ErrorTally();
    for (const each of records) tally.addResult(each);
    tally.add({ code: 'INPUT_INVALID', message: '' });
    tally.add({ code: 'INPUT_INVALID', message: '' });
    expect(run.data.summary.errors.map(({ code, count }) => ({ code, count }))).toEqual(tally.top(20).map(({ code, count }) => ({ code, count })));
    const metrics = run.data.summary.metrics;
    expect(metrics.n_error).toBe(records.filter((each) => each.status === 'error').length);
    expect(metrics.n_error).toBeGreaterThan(3);
    const scored = metrics.n_ok - metrics.n_unscorable;
    expect(run.data.summary.coverage).toBe(`The score covers ${Math.floor((scored / 33) * 100)}% of the items (${scored} of 33): ${metrics.n_error} in error, 2 invalid.`);
    expect(run.data.summary.advice).toEqual(retryAdvice({ errors: metrics.n_error, invalid: 2 }));
    expect(run.data.summary.advice[0]).toMatch(/^rerun the same command to grade the \d+ items in error again/);

    const clean = await collectRun(writeResults('clean.jsonl', records.filter((each) => each.status === 'ok')));
    expect(clean.data.summary.coverage).toBeNull();
    expect(clean.data.summary.advice).toEqual([]);
  });

  it('gives the same digest to the same verdicts whatever else changed, and another to a changed verdict', async () => {
    const records = [...syntheticResultRecords({ items: 10, criteriaPerItem: 3, seed: 8, errorRate: 0 })];
    const first = await collectRun(writeResults('digest-a.jsonl', records));
    const reworded = await collectRun(writeResults('digest-b.jsonl', records.map((each) => ({ ...each, response: `${each.response} (again)`, criteria: each.criteria.map((entry) => ({ ...entry, explanation: 'other words' })) }))));
    expect(reworded.data.digest).toBe(first.data.digest);
    const flipped = records.map((each, index) => (index === 4 ? { ...each, criteria: each.criteria.map((entry, position) => (position === 1 ? { ...entry, met: !entry.met } : entry)) } : each));
    expect((await collectRun(writeResults('digest-c.jsonl', flipped))).data.digest).not.toBe(first.data.digest);
    expect(first.data.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keeps each judge call of a results line in its item\'s texts, the shared system prompt once', async () => {
    const call = (id: string, reply: string) => ({ criteria: [id], messages: [{ role: 'system', content: 'You grade.' }, { role: 'user', content: `Grade ${id}` }], temperature: 0, max_tokens: 512, reply, latency_ms: 12, attempts: 1 });
    const line = record('calls', [criterion('a', 2, true), criterion('b', 1, false)], { judge_calls: [call('a', '{"criteria_met": true}'), call('b', 'unreadable')] });
    const run = await collectRun(writeResults('calls.jsonl', [line]));
    const chunk = run.texts[0];
    const [itemIndex, calls] = chunk.calls![0];
    expect(itemIndex).toBe(0);
    expect(calls.map((entry) => [entry.criteria.map((index) => chunk.strings[index]), chunk.strings[entry.reply], entry.latencyMs, entry.attempts])).toEqual([[['a'], '{"criteria_met": true}', 12, 1], [['b'], 'unreadable', 12, 1]]);
    expect(calls[0].messages[1]).toBe(calls[1].messages[1]);
    expect(JSON.parse(chunk.strings[calls[0].settings])).toEqual({ temperature: 0, max_tokens: 512 });
  });
});

describe('histogram', () => {
  it('covers [0, 1] in 0.05 steps and puts scores on an edge into the bin that starts there', () => {
    const edges = histogramEdges([[0.15, 0.3, 1]]);
    expect(edges).toHaveLength(21);
    expect(edges[3]).toBe(0.15);
    const counted = histogram([0, 0.15, 0.1499, 0.3, 1, null], edges);
    expect(counted.counts[0]).toBe(1);
    expect(counted.counts[2]).toBe(1);
    expect(counted.counts[3]).toBe(1);
    expect(counted.counts[6]).toBe(1);
    expect(counted.counts[19]).toBe(1);
    expect(counted.counts.reduce((total, count) => total + count, 0)).toBe(5);
  });

  it('widens to negative scores in 0.1 steps', () => {
    const edges = histogramEdges([[-0.73, 0.4], [0.95]]);
    expect(edges[0]).toBe(-0.8);
    expect(edges[edges.length - 1]).toBe(1);
    expect(edges[1] - edges[0]).toBeCloseTo(0.1, 12);
    expect(histogram([-0.73, -0.8, 0.4], edges).counts.slice(0, 2)).toEqual([2, 0]);
  });
});
