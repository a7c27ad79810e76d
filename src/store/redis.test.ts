import { Redis } from 'ioredis';
import { rmSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { redisTest } from '../testing/redis-fixture.js';
import { startRedisServer } from '../testing/redis-server.js';
import { describeReplyStoreContract } from './contract.js';
import { RedisReplyStore, replyKeyPrefix } from './redis.js';
import { describeRedisUrl, redisOptionsFromUrl } from './redis-connection.js';

describeReplyStoreContract('Redis', async () => {
  const server = await startRedisServer();
  const raw = new Redis(server.url);
  return {
    spec: server.url,
    writeRaw: async (key, text) => {
      await raw.set(replyKeyPrefix + key, text);
    },
    dispose: async () => {
      raw.disconnect();
      await server.stop();
      rmSync(server.directory, { recursive: true, force: true });
    },
  };
});

describe('Redis connections', () => {
  redisTest('reads user, password, database and TLS from the URL, and never shows the credentials', () => {
    const options = redisOptionsFromUrl('rediss://reader:s%40cret@cache.internal:6380/2');
    expect(options).toMatchObject({ host: 'cache.internal', port: 6380, db: 2, username: 'reader', password: 's@cret', tls: { servername: 'cache.internal' } });
    expect(redisOptionsFromUrl('redis://127.0.0.1:7000').tls).toBeUndefined();
    expect(describeRedisUrl('rediss://reader:s%40cret@cache.internal:6380/2?x=1')).toBe('rediss://cache.internal:6380/2');
  });

  redisTest('authenticates with the password in the URL; a wrong password fails clearly', async ({ redis }) => {
    const admin = new Redis(redis.url);
    await admin.config('SET', 'requirepass', 'hunter2');
    admin.disconnect();
    const store = new RedisReplyStore(`redis://:hunter2@127.0.0.1:${redis.port}`);
    await store.put('k', { text: 't', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 } });
    expect((await store.get('k'))?.text).toBe('t');
    await store.close();
    const wrong = new RedisReplyStore(`redis://:wrong-password@127.0.0.1:${redis.port}`);
    const failure = await Promise.resolve(wrong.get('k')).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(String((failure as Error).message)).not.toContain('wrong-password');
    await wrong.close();
  });
});
