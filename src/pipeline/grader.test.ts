import { describe, expect } from 'vitest';
import { RubricateError } from '../errors.js';
import type { Judge, JudgeReply } from '../judges/types.js';
import type { ReplyStore } from '../store/types.js';
import type { ImportRecord } from '../rubric/records.js';
import { normalizeItem } from '../rubric/normalize.js';
import type { Item } from '../rubric/schema.js';
import { binaryVerdict } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { Grader, type GraderOptions } from './grader.js';

function grader(judge: Judge, options: Partial<GraderOptions> = {}) {
  return new Grader({ judge, ...options, calls: { retryBaseDelayMs: 1, ...options.calls } });
}

function makeItem(id: string, criteria: number, response = `response ${id}`): Item {
  return normalizeItem({ id, prompt: 'question', response, rubric: { criteria: Array.from({ length: criteria }, (_, index) => ({ id: `c${index}`, text: `criterion ${index}`, points: 3 })) } });
}

async function* records(items: Item[]): AsyncGenerator<ImportRecord> {
  for (const [index, item] of items.entries()) yield { kind: 'item', item, line: index + 1 };
}

describe('Grader.gradeStream', () => {
  test('writes results in input order when later items finish first', async ({ scriptedJudge }) => {
    // The first item's reply is the slowest; its result must still come first.
    const { judge } = await scriptedJudge((request) => ({ content: binaryVerdict(true), delayMs: request.response === 'response i0' ? 60 : 0 }));
    const items = Array.from({ length: 6 }, (_, index) => makeItem(`i${index}`, 1));
    const ids: string[] = [];
    for await (const result of grader(judge, { calls: { concurrency: 6 } }).gradeStream(records(items))) ids.push(result.id);
    expect(ids).toEqual(items.map((item) => item.id));
  });

  test('a plain item given as a record is refused with what to pass instead', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(() => ({ content: binaryVerdict(true) }));
    async function* plain() {
      yield { id: 'q1', prompt: 'question', response: 'answer', rubric: { criteria: [{ text: 'criterion', points: 1 }] } } as unknown as ImportRecord;
    }
    const results = grader(judge).gradeStream(plain());
    await expect(results.next()).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining('gradeStream takes import records ({kind: "item", item, line}') });
  });

  test('passes invalid input records through in their place, counted once as invalid', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(() => ({ content: binaryVerdict(true) }));
    async function* mixed(): AsyncGenerator<ImportRecord> {
      yield { kind: 'item', item: makeItem('a', 1), line: 1 };
      yield { kind: 'invalid', line: 2, error: new RubricateError('INPUT_INVALID', 'bad', { line: 2 }) };
      yield { kind: 'item', item: makeItem('b', 1), line: 3 };
    }
    const events: string[] = [];
    const out: string[] = [];
    for await (const result of grader(judge, { onEvent: (event) => event.type === 'item' && events.push(event.status) }).gradeStream(mixed())) out.push(`${result.status}:${result.id || result.line}`);
    expect(out).toEqual(['ok:a', 'invalid:2', 'ok:b']);
    expect(events.sort()).toEqual(['invalid', 'ok', 'ok']);
  });

  test('stops the run on bad credentials instead of failing every item', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ status: 401, body: { error: { message: 'invalid api key' } } }));
    const items = Array.from({ length: 30 }, (_, index) => makeItem(`i${index}`, 3));
    const stream = grader(judge, { calls: { concurrency: 2 } }).gradeStream(records(items));
    await expect(async () => {
      for await (const _record of stream) {
        // drain
      }
    }).rejects.toMatchObject({ code: 'JUDGE_AUTH' });
    expect(fake.requests.length).toBeLessThan(10);
  });
});

describe('Grader with keepRequests', () => {
  /** A store kept in a map, as JSON (what every store writes). */
  function mapStore(): ReplyStore & { entries: Map<string, string> } {
    const entries = new Map<string, string>();
    return { entries, get: (key) => (entries.has(key) ? (JSON.parse(entries.get(key)!) as JudgeReply) : undefined), put: (key, reply) => void entries.set(key, JSON.stringify(reply)), close: () => undefined };
  }

  test('keeps every call as the judge received and answered it, with its latency; a cache hit keeps the first call\'s latency and counts no attempt', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge((request) => ({ content: { explanation: `about ${request.criteria[0].id}`, criteria_met: request.criteria[0].id === 'c0' } }));
    const store = mapStore();
    const item = makeItem('kept', 2);
    const first = await grader(judge, { keepRequests: true, store }).gradeItem(item);
    expect(first.judge_calls).toHaveLength(2);
    for (const call of first.judge_calls!) {
      const sent = fake.requests.find((request) => request.criteria[0]?.id === call.criteria[0])!;
      expect(call.messages).toEqual(sent.messages);
      expect(JSON.parse(call.reply!)).toEqual({ explanation: `about ${call.criteria[0]}`, criteria_met: call.criteria[0] === 'c0' });
      expect(call).toMatchObject({ temperature: 0, max_tokens: 1024, attempts: 1, output_schema: { name: 'criterion_verdict' } });
      expect(call.latency_ms).toBeGreaterThanOrEqual(0);
    }
    const again = await grader(judge, { keepRequests: true, store }).gradeItem(item);
    expect(fake.requests).toHaveLength(2);
    expect(again.judge_calls).toEqual(first.judge_calls!.map((call) => ({ ...call, attempts: 0 })));
    // Off by default: nothing kept, and the results line is as before.
    expect((await grader(judge, { store }).gradeItem(item)).judge_calls).toBeUndefined();
  });

  test('a batched call is kept once for the criteria it decided, and each jury member\'s calls are named', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge((request) => ({ content: request.criteria.length > 1 ? { verdicts: Object.fromEntries(request.criteria.map((criterion) => [criterion.id, { explanation: 'x', criteria_met: true }])) } : binaryVerdict(true) }));
    const batched = await grader(judge, { keepRequests: true, plan: { criteriaPerCall: 'all' } }).gradeItem(makeItem('batched', 3));
    expect(batched.judge_calls!.map((call) => call.criteria)).toEqual([['c0', 'c1', 'c2']]);
    const jury = await grader(judge, { keepRequests: true, judges: [judge, judge], jury: { samples: 2 }, plan: { sampling: { temperature: 0.7 } } }).gradeItem(makeItem('jury', 1));
    expect(jury.judge_calls!.map((call) => [call.judge, call.sample])).toEqual([[judge.provenance.id, 0], [judge.provenance.id, 1], [judge.provenance.id, 0], [judge.provenance.id, 1]]);
  });

  test('is refused with omitText: a request holds the texts left out', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(() => ({ content: binaryVerdict(true) }));
    expect(() => grader(judge, { keepRequests: true, omitText: true })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', details: expect.objectContaining({ field: 'keep-requests' }) }));
  });
});
