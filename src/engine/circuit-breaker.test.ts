import { describe, expect } from 'vitest';
import { createPerCriterionStrategy } from '../grading/strategies.js';
import type { Judge } from '../judges/types.js';
import type { Item } from '../rubric/schema.js';
import { RewardService } from '../server/reward-service.js';
import { binaryVerdict, type FakeJudgeScript } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { GradingEngine, type EngineEvent } from './engine.js';

function item(index: number): Item {
  return {
    id: `i${index}`,
    prompt: [{ role: 'user', content: `q${index}` }],
    response: `r${index}`,
    rubric: { id: 'r', criteria: [{ id: 'c', text: `Criterion ${index}`, points: 1, tags: [], kind: 'principle' }] },
  };
}

/** One call at a time, one attempt each, recording the engine's events. */
function recordingEngine(judge: Judge, options: Partial<ConstructorParameters<typeof GradingEngine>[0]> = {}) {
  const events: EngineEvent[] = [];
  const engine = new GradingEngine({ judge, strategy: createPerCriterionStrategy({ sampling: { temperature: 0, maxTokens: 64 } }), onEvent: (event) => events.push(event), ...options, calls: { concurrency: 1, maxAttempts: 1, retryBaseDelayMs: 1, ...options.calls } });
  return { engine, events };
}

describe('judge circuit breaker', () => {
  test('opens after `threshold` consecutive hard failures and stops every later call', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ status: 400, body: { error: { message: 'deployment disabled' } } }));
    const { engine } = recordingEngine(judge, { calls: { breakerThreshold: 3 } });
    const results = [];
    for (let index = 0; index < 6; index += 1) results.push(await engine.gradeItem(item(index)));
    expect(fake.requests).toHaveLength(3);
    expect(engine.fatal?.code).toBe('JUDGE_CIRCUIT_OPEN');
    expect(engine.fatal?.message).toContain('deployment disabled');
    expect(results.at(-1)!.criteria[0].error?.code).toBe('JUDGE_CIRCUIT_OPEN');
  });

  test('a verdict in between resets the count: an intermittently failing judge is not stopped', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge((request) => (request.index % 2 === 0 ? { status: 400, body: { error: { message: 'flaky' } } } : { content: binaryVerdict(true) }));
    const { engine } = recordingEngine(judge, { calls: { breakerThreshold: 2 } });
    for (let index = 0; index < 10; index += 1) await engine.gradeItem(item(index));
    expect(fake.requests).toHaveLength(10);
    expect(engine.fatal).toBeUndefined();
  });

  test('transient failures (429, 5xx) do not open it', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(() => ({ status: 503, body: { error: { message: 'busy' } } }));
    const { engine } = recordingEngine(judge, { calls: { breakerThreshold: 2 } });
    for (let index = 0; index < 5; index += 1) await engine.gradeItem(item(index));
    expect(engine.fatal).toBeUndefined();
  });

  test('a reward server does not stop for good on a run of failures (its breaker is off)', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ status: 400, body: { error: { message: 'deployment disabled' } } }));
    const service = new RewardService({ grading: { judge, calls: { maxAttempts: 1, retryBaseDelayMs: 1 } } });
    await service.scoreItems(Array.from({ length: 25 }, (_, index) => item(index)));
    expect(fake.requests).toHaveLength(25);
    expect(service.fatalError).toBeUndefined();
  });
});

describe('Retry-After', () => {
  test('is capped by the call timeout and by maxRetryAfterMs', async ({ scriptedJudge }) => {
    let first = true;
    const script: FakeJudgeScript = () => {
      if (first) {
        first = false;
        return { status: 429, headers: { 'retry-after': '100000' }, body: { error: { message: 'slow down' } } };
      }
      return { content: binaryVerdict(true) };
    };
    const byTimeout = recordingEngine((await scriptedJudge(script)).judge, { calls: { timeoutMs: 300, maxAttempts: 2 } });
    expect((await byTimeout.engine.gradeItem(item(0))).status).toBe('ok');
    const waited = byTimeout.events.find((event) => event.type === 'retry' && event.delayMs > 0) as { delayMs: number };
    // The cap plus the small jitter (at most retryBaseDelayMs here).
    expect(waited.delayMs).toBeGreaterThanOrEqual(300);
    expect(waited.delayMs).toBeLessThanOrEqual(301);

    first = true;
    const byFlag = recordingEngine((await scriptedJudge(script)).judge, { calls: { maxRetryAfterMs: 50, maxAttempts: 2 } });
    expect((await byFlag.engine.gradeItem(item(0))).status).toBe('ok');
    const capped = byFlag.events.find((event) => event.type === 'retry' && event.delayMs > 0) as { delayMs: number };
    expect(capped.delayMs).toBeLessThanOrEqual(51);
  });
});
