import { afterEach, describe, expect, it } from 'vitest';
import { RubricateError } from '../errors.js';
import { createOpenAICompatibleJudge } from '../judges/openai/openai-judge.js';
import type { Judge } from '../judges/types.js';
import type { ImportRecord } from '../rubric/records.js';
import { normalizeItem } from '../rubric/normalize.js';
import type { Item } from '../rubric/schema.js';
import { binaryVerdict, startFakeJudge, type FakeJudge, type FakeJudgeScript } from '../testing/fake-judge.js';
import { Grader, type GraderOptions } from './grader.js';

let fake: FakeJudge | undefined;
let judge: (Judge & { close(): Promise<void> }) | undefined;

afterEach(async () => {
  await judge?.close();
  await fake?.close();
  fake = undefined;
  judge = undefined;
});

async function setup(script: FakeJudgeScript) {
  fake = await startFakeJudge(script);
  judge = createOpenAICompatibleJudge({ model: 'm', baseUrl: fake.baseUrl });
}

function grader(options: Partial<GraderOptions> = {}) {
  return new Grader({ judge, retryBaseDelayMs: 1, ...options });
}

function makeItem(id: string, criteria: number, response = `response ${id}`): Item {
  return normalizeItem({ id, prompt: 'question', response, rubric: { criteria: Array.from({ length: criteria }, (_, index) => ({ id: `c${index}`, text: `criterion ${index}`, points: 3 })) } });
}

async function* records(items: Item[]): AsyncGenerator<ImportRecord> {
  for (const [index, item] of items.entries()) yield { kind: 'item', item, line: index + 1 };
}

describe('Grader.gradeStream', () => {
  it('writes results in input order when later items finish first', async () => {
    // The first item's reply is the slowest; its result must still come first.
    await setup((request) => ({ content: binaryVerdict(true), delayMs: request.response === 'response i0' ? 60 : 0 }));
    const items = Array.from({ length: 6 }, (_, index) => makeItem(`i${index}`, 1));
    const ids: string[] = [];
    for await (const result of grader({ concurrency: 6 }).gradeStream(records(items))) ids.push(result.id);
    expect(ids).toEqual(items.map((item) => item.id));
  });

  it('passes invalid input records through in their place, counted once as invalid', async () => {
    await setup(() => ({ content: binaryVerdict(true) }));
    async function* mixed(): AsyncGenerator<ImportRecord> {
      yield { kind: 'item', item: makeItem('a', 1), line: 1 };
      yield { kind: 'invalid', line: 2, error: new RubricateError('INPUT_INVALID', 'bad', { line: 2 }) };
      yield { kind: 'item', item: makeItem('b', 1), line: 3 };
    }
    const events: string[] = [];
    const out: string[] = [];
    for await (const result of grader({ onEvent: (event) => event.type === 'item' && events.push(event.status) }).gradeStream(mixed())) out.push(`${result.status}:${result.id || result.line}`);
    expect(out).toEqual(['ok:a', 'invalid:2', 'ok:b']);
    expect(events.sort()).toEqual(['invalid', 'ok', 'ok']);
  });

  it('stops the run on bad credentials instead of failing every item', async () => {
    await setup(() => ({ status: 401, body: { error: { message: 'invalid api key' } } }));
    const items = Array.from({ length: 30 }, (_, index) => makeItem(`i${index}`, 3));
    const stream = grader({ concurrency: 2 }).gradeStream(records(items));
    await expect(async () => {
      for await (const _record of stream) {
        // drain
      }
    }).rejects.toMatchObject({ code: 'JUDGE_AUTH' });
    expect(fake!.requests.length).toBeLessThan(10);
  });
});
