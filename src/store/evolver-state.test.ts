/**
 * The evolving-rubric state contract, run on both stores: SQLite (a temp file) and Redis (a
 * real redis-server). Writes are compare-and-set on the prompt's version, so concurrent
 * writers from separate connections lose no update.
 */
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { Criterion } from '../rubric/schema.js';
import { redisTest } from '../testing/redis-fixture.js';
import { test } from '../testing/vitest-fixtures.js';
import type { EvolverStateStore, EvolvingCriterion, PromptState } from './evolver-state.js';
import { openEvolverStateStore } from './open-evolver-state.js';
import { hangGuard } from '../testing/hang-guard.js';

function criterion(id: string): EvolvingCriterion {
  return { criterion: { id, text: `Criterion ${id}.`, points: 1 } as Criterion, origin: 'evolving', active: true, added_step: 1, observations: 0 };
}

async function contract(open: () => EvolverStateStore): Promise<void> {
  const store = open();
  const other = open();
  try {
    await store.ready();
    expect(await store.read('q')).toBeUndefined();
    expect(await store.history('q')).toEqual([]);

    const first: PromptState = { prompt: '[{"role":"user","content":"Explain X."}]', step: 1, criteria: [criterion('a')] };
    expect(await store.write('q', 0, first, [{ step: 1, event: 'added', criterion_id: 'a', text: 'Criterion a.' }])).toBe(true);
    // Read back through another connection: the same state at version 1.
    expect(await other.read('q')).toEqual({ ...first, version: 1 });

    // A writer that read version 0 lost the race: nothing of its write lands.
    const stale: PromptState = { ...first, step: 9, criteria: [criterion('stale')] };
    expect(await other.write('q', 0, stale, [{ step: 9, event: 'added', criterion_id: 'stale', text: 'Criterion stale.' }])).toBe(false);
    expect((await store.read('q'))?.step).toBe(1);
    expect((await store.history('q')).map((event) => event.criterion_id)).toEqual(['a']);

    const deactivated = { ...criterion('a'), active: false, deactivated_step: 2, deactivation_reason: 'zero_variance' as const, last_variance: 0, observations: 1 };
    expect(await other.write('q', 1, { ...first, step: 2, criteria: [deactivated, criterion('b')] }, [{ step: 2, event: 'deactivated', criterion_id: 'a', text: 'Criterion a.', reason: 'zero_variance', variance: 0 }])).toBe(true);
    expect(await store.read('q')).toEqual({ prompt: first.prompt, step: 2, criteria: [deactivated, criterion('b')], version: 2 });
    expect(await store.history('q')).toEqual([
      { step: 1, event: 'added', criterion_id: 'a', text: 'Criterion a.' },
      { step: 2, event: 'deactivated', criterion_id: 'a', text: 'Criterion a.', reason: 'zero_variance', variance: 0 },
    ]);
    // Prompts are apart.
    expect(await store.read('other prompt')).toBeUndefined();

    // 20 updates from two connections at once, each read → add one criterion → compare-and-set, again when it lost: none lost.
    const addOne = async (target: EvolverStateStore, id: string) => {
      for (;;) {
        const current = await target.read('race');
        const criteria = [...(current?.criteria ?? []), criterion(id)];
        if (await target.write('race', current?.version ?? 0, { prompt: '[]', step: 1, criteria }, [{ step: 1, event: 'added', criterion_id: id, text: `Criterion ${id}.` }])) return;
      }
    };
    await Promise.all(Array.from({ length: 20 }, (_, index) => addOne(index % 2 === 0 ? store : other, `c${index}`)));
    const raced = await store.read('race');
    expect(raced?.version).toBe(20);
    expect(raced?.criteria.map((entry) => entry.criterion.id).sort()).toEqual(Array.from({ length: 20 }, (_, index) => `c${index}`).sort());
    expect(await store.history('race')).toHaveLength(20);
  } finally {
    await store.close();
    await other.close();
  }
}

describe('evolving-rubric state', () => {
  test('SQLite keeps the contract', async ({ tempDir }) => {
    await contract(() => openEvolverStateStore(join(tempDir, 'evolver.sqlite')));
  });

  redisTest('Redis keeps the contract', async ({ redis }) => {
    await contract(() => openEvolverStateStore(redis.url));
  }, hangGuard(30_000));

  redisTest('an unreachable Redis fails clearly at start-up', async ({ redis }) => {
    await redis.stop();
    const store = openEvolverStateStore(`redis://user:s3cret@127.0.0.1:${redis.port}`);
    try {
      // A short bound: the default 5 s would only be waited out, the refusal is the same.
      const failure = await store.ready(1_000).then(() => undefined, (error: unknown) => error as Error);
      expect(failure?.message).toMatch(/unavailable/);
      expect(failure?.message).not.toContain('s3cret');
    } finally {
      await store.close();
    }
  }, hangGuard(30_000));
});
