import { describe, expect, vi } from 'vitest';
import { RubricateError } from '../errors.js';
import type { Judge, JudgeRequest } from '../judges/types.js';
import { type FakeJudgeScript } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { afterAttempts, callJudge, retryDelay, type JudgeCallHooks, type JudgeCallPolicy } from './judge-call.js';
import type { CallOutcome } from './limiter.js';

const request: JudgeRequest = { messages: [{ role: 'user', content: 'Is the sky blue?' }], temperature: 0, maxTokens: 16 };
/** No jitter: the waits a test sees are exactly the policy's. */
const policy: JudgeCallPolicy = { maxAttempts: 4, timeoutMs: 5_000, retryBaseDelayMs: 1, retryMaxDelayMs: 4, random: () => 0 };

function call(judge: Judge, overrides: Partial<JudgeCallPolicy> = {}, hooks: JudgeCallHooks = {}) {
  return callJudge((signal) => judge.complete(request, { signal }), { ...policy, ...overrides }, hooks);
}

describe('callJudge', () => {
  test('retries 500, 429 and dropped connections, counting calls and retries, then returns the reply', async ({ scriptedJudge }) => {
    const plan: ReturnType<FakeJudgeScript>[] = [{ status: 500 }, { status: 429 }, { destroy: true }];
    const { fake, judge } = await scriptedJudge((incoming) => plan[incoming.index] ?? { content: 'yes' });
    const retried: string[] = [];
    const released: CallOutcome[] = [];
    const urgent: boolean[] = [];
    const result = await call(judge, {}, {
      onRetry: (error) => retried.push(error.code),
      slots: { acquire: async (isRetry) => void urgent.push(isRetry), release: (outcome) => void released.push(outcome) },
    });
    expect(result.reply?.text).toBe('yes');
    expect(result).toMatchObject({ calls: 4, retries: 3, fatal: false });
    expect(retried).toEqual(['JUDGE_SERVER_ERROR', 'JUDGE_RATE_LIMITED', 'JUDGE_CONNECTION']);
    // A 429 lowers the limiter like an overload; retries go ahead of fresh work.
    expect(released).toEqual(['failure', 'overloaded', 'failure', 'success']);
    expect(urgent).toEqual([false, true, true, true]);
    expect(fake.requests).toHaveLength(4);
  });

  test('gives up after maxAttempts with the last error and the attempt count', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(() => ({ status: 500 }));
    const result = await call(judge, { maxAttempts: 3 });
    expect(result.reply).toBeUndefined();
    expect(result.error?.code).toBe('JUDGE_SERVER_ERROR');
    expect(result.error?.message).toMatch(/\(after 3 attempts\)$/);
    expect(result).toMatchObject({ calls: 3, retries: 2, fatal: false });
  });

  test('does not retry an error that will not pass, and reports it without an attempt count', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(() => ({ status: 400, body: { error: { message: 'bad request: temperature' } } }));
    const result = await call(judge);
    expect(result.error?.code).toBe('JUDGE_REQUEST_REJECTED');
    expect(result.error?.message).not.toMatch(/attempts/);
    expect(result).toMatchObject({ calls: 1, retries: 0, fatal: false });
  });

  test('waits what Retry-After asks, capped by maxRetryAfterMs', async ({ scriptedJudge }) => {
    const plan: ReturnType<FakeJudgeScript>[] = [{ status: 429, headers: { 'retry-after-ms': '40' } }, { status: 429, headers: { 'retry-after': '3600' } }];
    const { judge } = await scriptedJudge((incoming) => plan[incoming.index] ?? { content: 'ok' });
    const waits: number[] = [];
    const result = await call(judge, { maxRetryAfterMs: 60 }, { onRetry: (_error, delayMs) => void waits.push(delayMs) });
    expect(result.reply?.text).toBe('ok');
    // 40 ms as asked; an hour asked is capped at 60 ms (not the 1–4 ms backoff either way).
    expect(waits).toEqual([40, 60]);
  });

  test('times out a call that never answers, retries it, and names the timeout when every attempt hangs', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge((incoming) => (incoming.index < 2 ? { hang: true } : { content: 'late but here' }));
    const once = await call(judge, { timeoutMs: 80, maxAttempts: 2 });
    expect(once.error?.code).toBe('JUDGE_TIMEOUT');
    expect(once.error?.message).toBe('judge did not answer within 80 ms (after 2 attempts)');
    expect(once.calls).toBe(2);
    // The hangs are over: this answer comes at once, and a long timeout keeps a loaded machine from racing it.
    const again = await call(judge, { timeoutMs: 10_000, maxAttempts: 2 });
    expect(again.reply?.text).toBe('late but here');
  });

  test('aborts a call in flight when the run is cancelled, and does not retry it', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ hang: true }));
    const controller = new AbortController();
    const pending = call(judge, { signal: controller.signal, timeoutMs: 60_000 });
    await vi.waitFor(() => expect(fake.requests).toHaveLength(1));
    controller.abort();
    const result = await pending;
    expect(result.error).toMatchObject({ code: 'DEADLINE_EXCEEDED', message: 'grading was cancelled' });
    expect(result).toMatchObject({ calls: 1, retries: 0, fatal: false });
  });

  test('ends a backoff wait at once when the run is cancelled', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(() => ({ status: 503 }));
    const controller = new AbortController();
    // A minute of backoff: only the cancellation can end this test in time.
    const result = await call(judge, { signal: controller.signal, retryBaseDelayMs: 60_000, retryMaxDelayMs: 60_000 }, { onRetry: () => controller.abort() });
    expect(result.error?.code).toBe('DEADLINE_EXCEEDED');
    expect(result).toMatchObject({ calls: 1, retries: 1 });
  });

  test('starts no call once stopped, and says so', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: 'never asked' }));
    const stop = new AbortController();
    stop.abort();
    const result = await call(judge, { stopSignal: stop.signal, activity: 'generation' });
    expect(result.error).toMatchObject({ code: 'DEADLINE_EXCEEDED', message: 'generation was stopped before this call started' });
    expect(result.calls).toBe(0);
    expect(fake.requests).toHaveLength(0);
  });

  test('classifies bad credentials as fatal: no retry, and the caller is told to stop', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(() => ({ status: 401, body: { error: { message: 'invalid api key' } } }));
    const result = await call(judge);
    expect(result.error?.code).toBe('JUDGE_AUTH');
    expect(result).toMatchObject({ calls: 1, retries: 0, fatal: true });
  });

  test('ends with the error a failure hook returns (a breaker opening), and starts nothing after a stop reason', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ destroy: true }));
    const opened = new RubricateError('JUDGE_CIRCUIT_OPEN', 'stopped: the judge is unreachable');
    const tripped = await call(judge, {}, { onFailure: (error) => (error.code === 'JUDGE_CONNECTION' ? opened : undefined) });
    expect(tripped).toMatchObject({ error: opened, calls: 1, fatal: true });
    const before = fake.requests.length;
    const refused = await call(judge, {}, { stopReason: () => opened });
    expect(refused).toMatchObject({ error: opened, calls: 0, fatal: true });
    expect(fake.requests.length).toBe(before);
  });

  test('gives a taken slot back when the run stops while the call waited for it', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: 'unused' }));
    const opened = new RubricateError('JUDGE_CIRCUIT_OPEN', 'stopped');
    let stopped: RubricateError | undefined;
    const released: CallOutcome[] = [];
    const result = await call(judge, {}, {
      stopReason: () => stopped,
      slots: {
        acquire: async () => {
          stopped = opened;
        },
        release: (outcome) => void released.push(outcome),
      },
    });
    expect(result).toMatchObject({ error: opened, calls: 0, fatal: true });
    expect(released).toEqual(['failure']);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('retryDelay', () => {
  const error = new RubricateError('JUDGE_SERVER_ERROR', 'HTTP 500');
  test('doubles from the base up to the maximum, with jitter between half and all of it', () => {
    const settings = { retryBaseDelayMs: 100, retryMaxDelayMs: 1_000, timeoutMs: 10_000 };
    expect([1, 2, 3, 4, 5].map((attempt) => retryDelay(attempt, error, { ...settings, random: () => 0.999999 }))).toEqual([100, 200, 400, 800, 1_000].map((ms) => expect.closeTo(ms, 0)));
    expect([1, 2, 3].map((attempt) => retryDelay(attempt, error, { ...settings, random: () => 0 }))).toEqual([50, 100, 200]);
  });

  test('never waits past the call timeout for a Retry-After', () => {
    const asked = new RubricateError('JUDGE_RATE_LIMITED', 'HTTP 429', { retryAfterMs: 90_000 });
    expect(retryDelay(1, asked, { retryBaseDelayMs: 500, retryMaxDelayMs: 30_000, timeoutMs: 20_000, random: () => 0 })).toBe(20_000);
    expect(retryDelay(1, asked, { retryBaseDelayMs: 500, retryMaxDelayMs: 30_000, timeoutMs: 120_000, random: () => 0 })).toBe(60_000);
  });
});

describe('afterAttempts', () => {
  test('states the total number of attempts once', () => {
    const first = afterAttempts(new RubricateError('JUDGE_TIMEOUT', 'no answer'), 2);
    expect(first.message).toBe('no answer (after 2 attempts)');
    expect(afterAttempts(first, 5).message).toBe('no answer (after 5 attempts)');
    expect(afterAttempts(first, 1)).toBe(first);
  });
});
