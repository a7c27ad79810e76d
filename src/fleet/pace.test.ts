/** Fleet pace against a real Redis: what a call reserves, and how its reply's usage corrects that. */
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { expect } from 'vitest';
import { RedisConnection } from '../store/redis-connection.js';
import { redisTest } from '../testing/redis-fixture.js';
import { estimateRequestTokens, FleetPace } from './pace.js';

// A budget no number of seconds but 60 divides: one window of a minute, so nothing expires mid-test.
const tokensPerMinute = 120_001;

redisTest('a call reserves its estimate; its reply gives back what it did not use, or takes what it used beyond', async ({ redis, closeAfter }) => {
  const connection = closeAfter(new RedisConnection(redis.url));
  await connection.ready();
  const pace = new FleetPace(connection.client, 'usage', { tokensPerMinute }, 'the test Redis');
  // The window as another process sees it.
  const window = new RateLimiterRedis({ storeClient: connection.client, keyPrefix: 'rubricate:tpm:usage', points: tokensPerMinute, duration: 60 });
  const used = async () => (await window.get('fleet'))?.consumedPoints;
  const signal = new AbortController().signal;
  const request = { messages: [{ role: 'user' as const, content: 'x'.repeat(400) }], maxTokens: 900 };

  const first = await pace.beforeCall(request, signal);
  expect(first).toBe(estimateRequestTokens(request));
  expect(first).toBe(1_000);
  expect(await used()).toBe(1_000);
  await pace.afterCall(first, { text: 'ok', usage: { inputTokens: 100, outputTokens: 10, cachedInputTokens: 0 } });
  expect(await used()).toBe(110);

  const second = await pace.beforeCall(request, signal);
  expect(await used()).toBe(1_110);
  await pace.afterCall(second, { text: 'ok', usage: { inputTokens: 1_500, outputTokens: 20, cachedInputTokens: 0 } });
  expect(await used()).toBe(110 + 1_520);
});
