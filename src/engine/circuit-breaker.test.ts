import { afterEach, describe, expect, it } from 'vitest';
import { createPerCriterionStrategy } from '../grading/strategies.js';
import { createOpenAICompatibleJudge } from '../judges/openai/openai-judge.js';
import type { Item } from '../rubric/schema.js';
import { RewardService } from '../server/reward-service.js';
import { binaryVerdict, startFakeJudge, type FakeJudge, type FakeJudgeScript } from '../testing/fake-judge.js';
import { GradingEngine, type EngineEvent } from './engine.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function item(index: number): Item {
  return {
    id: `i${index}`,
    prompt: [{ role: 'user', content: `q${index}` }],
    response: `r${index}`,
    rubric: { id: 'r', criteria: [{ id: 'c', text: `Criterion ${index}`, points: 1, tags: [], kind: 'principle' }] },
  };
}

async function setup(script: FakeJudgeScript, options: Partial<ConstructorParameters<typeof GradingEngine>[0]> = {}) {
  const fake: FakeJudge = await startFakeJudge(script);
  const judge = createOpenAICompatibleJudge({ model: 'm', baseUrl: fake.baseUrl });
  closers.push(async () => {
    await judge.close();
    await fake.close();
  });
  const events: EngineEvent[] = [];
  const engine = new GradingEngine({
    judge,
    strategy: createPerCriterionStrategy({ sampling: { temperature: 0, maxTokens: 64 } }),
    concurrency: 1,
    maxAttempts: 1,
    retryBaseDelayMs: 1,
    onEvent: (event) => events.push(event),
    ...options,
  });
  return { fake, engine, events };
}

describe('judge circuit breaker', () => {
  it('opens after `threshold` consecutive hard failures and stops every later call', async () => {
    const { fake, engine } = await setup(() => ({ status: 400, body: { error: { message: 'deployment disabled' } } }), { breakerThreshold: 3 });
    const results = [];
    for (let index = 0; index < 6; index += 1) results.push(await engine.gradeItem(item(index)));
    expect(fake.requests).toHaveLength(3);
    expect(engine.fatal?.code).toBe('JUDGE_CIRCUIT_OPEN');
    expect(engine.fatal?.message).toContain('deployment disabled');
    expect(results.at(-1)!.criteria[0].error?.code).toBe('JUDGE_CIRCUIT_OPEN');
  });

  it('a verdict in between resets the count: an intermittently failing judge is not stopped', async () => {
    const { fake, engine } = await setup((request) => (request.index % 2 === 0 ? { status: 400, body: { error: { message: 'flaky' } } } : { content: binaryVerdict(true) }), { breakerThreshold: 2 });
    for (let index = 0; index < 10; index += 1) await engine.gradeItem(item(index));
    expect(fake.requests).toHaveLength(10);
    expect(engine.fatal).toBeUndefined();
  });

  it('transient failures (429, 5xx) do not open it', async () => {
    const { engine } = await setup(() => ({ status: 503, body: { error: { message: 'busy' } } }), { breakerThreshold: 2 });
    for (let index = 0; index < 5; index += 1) await engine.gradeItem(item(index));
    expect(engine.fatal).toBeUndefined();
  });

  it('a reward server does not stop for good on a run of failures (its breaker is off)', async () => {
    const fake = await startFakeJudge(() => ({ status: 400, body: { error: { message: 'deployment disabled' } } }));
    const judge = createOpenAICompatibleJudge({ model: 'm', baseUrl: fake.baseUrl });
    closers.push(async () => {
      await judge.close();
      await fake.close();
    });
    const service = new RewardService({ grading: { judge, maxAttempts: 1, retryBaseDelayMs: 1 } });
    await service.scoreItems(Array.from({ length: 25 }, (_, index) => item(index)));
    expect(fake.requests).toHaveLength(25);
    expect(service.fatalError).toBeUndefined();
  });
});

describe('Retry-After', () => {
  it('is capped by the call timeout and by maxRetryAfterMs', async () => {
    let first = true;
    const script: FakeJudgeScript = () => {
      if (first) {
        first = false;
        return { status: 429, headers: { 'retry-after': '100000' }, body: { error: { message: 'slow down' } } };
      }
      return { content: binaryVerdict(true) };
    };
    const byTimeout = await setup(script, { timeoutMs: 300, maxAttempts: 2 });
    expect((await byTimeout.engine.gradeItem(item(0))).status).toBe('ok');
    const waited = byTimeout.events.find((event) => event.type === 'retry' && event.delayMs > 0) as { delayMs: number };
    // The cap plus the small jitter (at most retryBaseDelayMs here).
    expect(waited.delayMs).toBeGreaterThanOrEqual(300);
    expect(waited.delayMs).toBeLessThanOrEqual(301);

    first = true;
    const byFlag = await setup(script, { maxRetryAfterMs: 50, maxAttempts: 2 });
    expect((await byFlag.engine.gradeItem(item(0))).status).toBe('ok');
    const capped = byFlag.events.find((event) => event.type === 'retry' && event.delayMs > 0) as { delayMs: number };
    expect(capped.delayMs).toBeLessThanOrEqual(51);
  });
});
