/** The vitest fixture for a real Redis: `redisTest('…', async ({ redis }) => …)`, with the common fixtures too. */
import { rmSync } from 'node:fs';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { test } from './vitest-fixtures.js';

/** vitest fixture: `redisTest('…', async ({ redis }) => …)` gets a fresh server, stopped and removed afterwards. */
export const redisTest = test.extend<{ redis: RedisServer }>({
  // eslint-disable-next-line no-empty-pattern
  redis: async ({}, use) => {
    const server = await startRedisServer();
    try {
      await use(server);
    } finally {
      await server.stop();
      rmSync(server.directory, { recursive: true, force: true });
    }
  },
});
