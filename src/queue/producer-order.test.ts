import { parseRunSpec } from '../spec/run-spec.js';
import { describe, expect } from 'vitest';
import { Grader } from '../pipeline/grader.js';
import type { ImportRecord } from '../rubric/records.js';
import { normalizeItem } from '../rubric/normalize.js';
import { binaryVerdict } from '../testing/fake-judge.js';
import { redisTest } from '../testing/redis-fixture.js';
import { gradeThroughQueue, runGradingWorker } from './grading-queue.js';

async function* records(count: number): AsyncGenerator<ImportRecord> {
  for (let index = 0; index < count; index += 1) {
    const item = normalizeItem({ id: `item-${index}`, prompt: `Question ${index}?`, response: `Answer ${index}.`, rubric: { criteria: [{ text: `Answers ${index}`, points: 1 }] } });
    yield { kind: 'item', item, line: index + 1 };
  }
}

describe('gradeThroughQueue', () => {
  redisTest('writes every item once, in input order, whichever chunk a worker finishes first', async ({ redis, scriptedJudge }) => {
    // Early items answer slowest, so later chunks finish first.
    const { fake, judge } = await scriptedJudge((request) => ({ content: binaryVerdict(true), delayMs: /Answer [0-4]\./.test(request.response ?? '') ? 80 : 0 }));
    const stop = new AbortController();
    const worker = runGradingWorker({
      url: redis.url,
      createGrader: async () => ({ grader: new Grader({ judge, calls: { concurrency: 8 } }), close: async () => {} }),
      chunkConcurrency: 4,
      signal: stop.signal,
    });
    try {
      const ids: string[] = [];
      for await (const result of gradeThroughQueue(records(23), { url: redis.url, spec: parseRunSpec({}), chunkSize: 5, window: 3 })) ids.push(result.id);
      expect(ids).toEqual(Array.from({ length: 23 }, (_, index) => `item-${index}`));
      expect(fake.requests).toHaveLength(23);
    } finally {
      stop.abort();
      await worker;
    }
  });
});
